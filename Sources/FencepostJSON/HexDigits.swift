extension UInt64 {
    /// 16 lower-case hex digits, zero-padded: how hashes, checksums and digests are printed.
    public var hexDigits: String {
        let digits = String(self, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
