import FencepostJSON
import Testing
import SeededRandom

/// Random JSON values: every kind, awkward strings, extreme numbers, bounded nesting.
struct RandomJSON {
    var rng: SplitMix64

    mutating func value(depth: Int = 0) -> JSONValue {
        let leaf = depth >= 6 || Int.random(in: 0..<3, using: &rng) == 0
        switch Int.random(in: 0..<(leaf ? 6 : 8), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .integer(integer())
        case 3: return .number(double())
        case 4, 5: return .string(string())
        case 6: return .array((0..<Int.random(in: 0..<6, using: &rng)).map { _ in value(depth: depth + 1) })
        default:
            var keys = Set<String>()
            var members: [(key: String, value: JSONValue)] = []
            for _ in 0..<Int.random(in: 0..<6, using: &rng) {
                let k = string()
                if keys.insert(k).inserted { members.append((key: k, value: value(depth: depth + 1))) }
            }
            return .object(members)
        }
    }

    mutating func integer() -> Int64 {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return [0, 1, -1, .max, .min, 9_007_199_254_740_993].randomElement(using: &rng)!
        case 1: return Int64.random(in: -1000...1000, using: &rng)
        default: return Int64(bitPattern: rng.next())
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return [0.0, -0.0, 0.1, 1.0, -1.5, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                    -.greatestFiniteMagnitude, .ulpOfOne, 1e16, 123456789.125].randomElement(using: &rng)!
        case 1: return Double.random(in: -1e6...1e6, using: &rng)
        default:
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite { return d }
            }
        }
    }

    mutating func string() -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0..<12, using: &rng) {
            let scalar: Unicode.Scalar
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: scalar = Unicode.Scalar(UInt8.random(in: 0..<0x20, using: &rng))
            case 1: scalar = ["\"", "\\", "/", "\u{7F}", "\u{2028}", "\u{FEFF}"].randomElement(using: &rng)!
            case 2: scalar = Unicode.Scalar(UInt32.random(in: 0x80...0xFFFF, using: &rng)) ?? "é"
            case 3: scalar = Unicode.Scalar(UInt32.random(in: 0x10000...0x10FFFF, using: &rng))!
            default: scalar = Unicode.Scalar(UInt8.random(in: 0x20..<0x7F, using: &rng))
            }
            s.append(scalar)
        }
        return String(s)
    }
}

@Suite struct JSONRandomTests {
    /// value → serialize → parse → equal, over many seeds. The failing seed is in the message.
    @Test func randomValuesRoundTrip() throws {
        for seed in UInt64(1)...2000 {
            var gen = RandomJSON(rng: SplitMix64(seed: seed))
            let v = gen.value()
            let text = v.serialized()
            let parsed: JSONValue
            do { parsed = try JSONValue.parse(text) } catch {
                Issue.record("seed \(seed): serialized text does not parse: \(error)\n\(text)")
                continue
            }
            #expect(parsed == v, "seed \(seed): \(text)")
            #expect(parsed.serialized() == text, "seed \(seed)")
        }
    }

    /// Random edits of valid texts: the parser returns or throws with an offset inside the input,
    /// never crashes; whatever it accepts serializes and parses back to the same value.
    @Test func randomMutationsNeverCrash() {
        let interesting: [UInt8] = Array(#"{}[]":,\u0123456789-+.eEtruefalsn "#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xED, 0xF4, 0xFF]
        var accepted = 0, rejected = 0
        for seed in UInt64(1)...3000 {
            var gen = RandomJSON(rng: SplitMix64(seed: seed))
            var bytes = Array(gen.value(depth: 2).serialized().utf8)
            for _ in 0..<Int.random(in: 1...4, using: &gen.rng) {
                let kind = Int.random(in: 0..<5, using: &gen.rng)
                let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &gen.rng)
                switch kind {
                case 0 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &gen.rng)
                case 1 where !bytes.isEmpty: bytes[position] = interesting.randomElement(using: &gen.rng)!
                case 2: bytes.insert(interesting.randomElement(using: &gen.rng)!, at: position)
                case 3 where !bytes.isEmpty: bytes.remove(at: position)
                default: bytes.removeLast(bytes.isEmpty ? 0 : Int.random(in: 0...min(3, bytes.count), using: &gen.rng))
                }
            }
            do {
                let v = try JSONValue.parse(bytes)
                accepted += 1
                let again = try? JSONValue.parse(v.serialized())
                #expect(again == v, "seed \(seed): \(bytes)")
            } catch {
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count, "seed \(seed): \(error)")
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted > 0 && rejected > 0)
    }

    /// Random bytes (not derived from JSON at all).
    @Test func randomBytesNeverCrash() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0..<40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? JSONValue.parse(bytes)
        }
    }
}
