// The expiry of an X.509 certificate, for the board's health: read from the PEM file with a
// minimal DER walk, no crypto and no Foundation (the agent's path builds as Embedded Swift).
//
//   Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber
//                   INTEGER, signature SEQUENCE, issuer SEQUENCE, validity SEQUENCE { notBefore
//                   Time, notAfter Time }, … }, … }        (RFC 5280 §4.1)
//   Time ::= UTCTime "YYMMDDHHMMSSZ" (YY < 50: 20YY) | GeneralizedTime "YYYYMMDDHHMMSSZ"
//
// Nothing is verified here (libssl does that at connect); a certificate this walk cannot read
// gives nil, and the health says null rather than a wrong date. The alternative, OpenSSL's
// PEM_read_bio_X509 + X509_get0_notAfter + ASN1_TIME_to_tm through the libcrypto libmosquitto
// loads, would need six more symbols resolved per OpenSSL soname, for the same answer.
import CivilTime

public enum FleetCertificate {
    /// The `notAfter` of the first certificate in a PEM file's bytes; nil when there is none or
    /// it cannot be read.
    ///
    /// - Complexity: O(file size).
    public static func notAfter(pem: [UInt8]) -> WallInstant? {
        guard let der = firstCertificateDER(pem) else { return nil }
        return notAfter(der: der)
    }

    /// The `notAfter` of a DER certificate.
    public static func notAfter(der: [UInt8]) -> WallInstant? {
        var r = DERReader(bytes: der, at: 0, end: der.count)
        guard let cert = r.element(tag: 0x30) else { return nil }
        var c = DERReader(bytes: der, at: cert.start, end: cert.end)
        guard let tbs = c.element(tag: 0x30) else { return nil }
        var t = DERReader(bytes: der, at: tbs.start, end: tbs.end)
        if t.peek == 0xA0 { _ = t.element(tag: 0xA0) }   // version
        guard t.element(tag: 0x02) != nil,                   // serialNumber
              t.element(tag: 0x30) != nil,                   // signature
              t.element(tag: 0x30) != nil,                   // issuer
              let validity = t.element(tag: 0x30) else { return nil }
        var v = DERReader(bytes: der, at: validity.start, end: validity.end)
        guard let tag = v.peek, tag == 0x17 || tag == 0x18, v.element(tag: tag) != nil,
              let after = v.peek, after == 0x17 || after == 0x18, let time = v.element(tag: after) else { return nil }
        return Self.time(Array(der[time.start ..< time.end]), generalized: after == 0x18)
    }

    /// UTCTime or GeneralizedTime in UTC ("Z"), seconds included (what RFC 5280 requires).
    static func time(_ text: [UInt8], generalized: Bool) -> WallInstant? {
        let digits = generalized ? 14 : 12
        guard text.count == digits + 1, text[digits] == UInt8(ascii: "Z"),
              text[..<digits].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        func n(_ i: Int, _ count: Int) -> Int { text[i ..< i + count].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        var i = 0
        var year: Int
        if generalized { year = n(0, 4); i = 4 } else { year = n(0, 2); year += year < 50 ? 2000 : 1900; i = 2 }
        let month = n(i, 2), day = n(i + 2, 2), hour = n(i + 4, 2), minute = n(i + 6, 2), second = n(i + 8, 2)
        guard (1...12).contains(month), day >= 1, day <= CivilDays.daysInMonth(year: Int64(year), month: month),
              hour < 24, minute < 60, second < 60 else { return nil }
        return WallInstant(secondsSinceEpoch: CivilDateTime(year: Int64(year), month: month, day: day, hour: hour, minute: minute, second: second).localSeconds)
    }

    /// The base64 body of the first `-----BEGIN CERTIFICATE-----` block, decoded.
    static func firstCertificateDER(_ pem: [UInt8]) -> [UInt8]? {
        let begin = Array("-----BEGIN CERTIFICATE-----".utf8), end = Array("-----END CERTIFICATE-----".utf8)
        guard let b = find(begin, in: pem, from: 0), let e = find(end, in: pem, from: b + begin.count) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity((e - b) * 3 / 4)
        var acc: UInt32 = 0, bits = 0
        for c in pem[(b + begin.count) ..< e] {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a") ... UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "\t"): continue
            default: return nil
            }
            acc = (acc << 6) | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard hay.count >= needle.count else { return nil }
        var i = from
        while i + needle.count <= hay.count {
            if hay[i] == needle[0] && Array(hay[i ..< i + needle.count]) == needle { return i }
            i += 1
        }
        return nil
    }
}

/// Walks DER elements (tag, definite length, content) within `at..<end`.
struct DERReader {
    let bytes: [UInt8]
    var at: Int
    let end: Int

    var peek: UInt8? { at < end ? bytes[at] : nil }

    /// The next element's content range when its tag is `tag`; moves past it.
    mutating func element(tag: UInt8) -> (start: Int, end: Int)? {
        guard at + 2 <= end, bytes[at] == tag else { return nil }
        var i = at + 1
        var length = Int(bytes[i]); i += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count >= 1, count <= 4, i + count <= end else { return nil }
            length = 0
            for _ in 0 ..< count { length = length << 8 | Int(bytes[i]); i += 1 }
        }
        guard length >= 0, i + length <= end else { return nil }
        at = i + length
        return (i, i + length)
    }
}
