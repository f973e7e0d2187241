/// Text that does not compress: a database that would squeeze a repeated
/// `kkkk…` into a small index entry must store every byte of it.
enum NoiseText {
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// `count` letters and digits from a fixed pseudo-random sequence (the same every run).
    static func of(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> String {
        var state = seed
        return String((0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return alphabet[Int((state >> 33) % UInt64(alphabet.count))]
        })
    }
}
