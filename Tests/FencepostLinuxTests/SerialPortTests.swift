import FencepostLinux
import Glibc
import SeededRandom
import Testing

/// SerialPort over a real pseudo-terminal: the master plays the GPS receiver.
@Suite("serial port")
struct SerialPortTests {
    /// Reads from `port` through `loop` until `count` bytes came or the port disconnected.
    static func collect(_ port: SerialPort, _ loop: EventLoop<UInt64>, count: Int) throws -> (bytes: [UInt8], disconnected: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while out.count < count {
            let events = try loop.wait(timeout: .seconds(10))
            guard let event = events.first else { break }
            let hangup = event.isHangup
            while true {
                let r = try buffer.withUnsafeMutableBytes { try port.read(into: $0, hangupReported: hangup) }
                switch r {
                case .bytes(let n): out += buffer[..<n]
                case .wouldBlock: break
                case .disconnected: return (out, true)
                }
                if r == .wouldBlock { break }
            }
        }
        return (out, false)
    }

    static func write(_ fd: FileDescriptor, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try fd.writeAll($0) }
    }

    @Test("bytes written on the master arrive unchanged (raw mode: CR, LF, NUL, 0xFF, ^C, ^D)")
    func bytesArrive() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath, baudRate: 9600)
        #expect(port.path == pty.devicePath)
        let loop = try EventLoop<UInt64>()
        try loop.register(port.descriptor, for: .readable, token: 1)
        var nothing = [UInt8](repeating: 0, count: 8)
        #expect(try nothing.withUnsafeMutableBytes { try port.read(into: $0) } == .wouldBlock)

        var rng = SplitMix64(seed: 0x5E41A1)
        var sent = Array("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n".utf8)
        sent += [0, 3, 4, 0x11, 0x13, 0x7F, 0xFF, 0x0D, 0x0A]
        sent += (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        try Self.write(pty.master, sent)
        let (got, disconnected) = try Self.collect(port, loop, count: sent.count)
        #expect(!disconnected)
        #expect(got == sent, "seed 0x5E41A1")
    }

    @Test("closing the master reports disconnected; a new pty works after reopening")
    func disconnectAndReopen() throws {
        var pty = try PseudoTerminal()
        var port = try SerialPort(path: pty.devicePath, baudRate: 115200)
        var loop = try EventLoop<UInt64>()
        try loop.register(port.descriptor, for: .readable, token: 1)
        try Self.write(pty.master, Array("before\n".utf8))
        #expect(try Self.collect(port, loop, count: 7).bytes == Array("before\n".utf8))

        try Self.write(pty.master, Array("last".utf8))
        pty.closeMaster()
        let end = try Self.collect(port, loop, count: 1000)
        #expect(end.disconnected)
        // The hang-up may discard what the line discipline still held; nothing else may arrive.
        #expect(end.bytes.isEmpty || end.bytes == Array("last".utf8))

        // Reopen on a fresh device, as the agent would after an unplug.
        pty = try PseudoTerminal()
        port = try SerialPort(path: pty.devicePath, baudRate: 4800)
        loop = try EventLoop<UInt64>()
        try loop.register(port.descriptor, for: .readable, token: 2)
        try Self.write(pty.master, Array("after\n".utf8))
        let after = try Self.collect(port, loop, count: 6)
        #expect(after.bytes == Array("after\n".utf8))
        #expect(!after.disconnected)
    }

    @Test("a nonexistent path is an error that names the path")
    func missingDevice() throws {
        let path = "/dev/serial-fencepost-missing-\(getpid())"
        let error = #expect(throws: SerialPortError.self) { try SerialPort(path: path, baudRate: 9600) }
        #expect(error?.path == path)
        #expect(error?.errno == .noEntry)
        #expect(error?.description == "\(path): No such file or directory")
    }

    @Test("a file that is not a terminal fails in tcgetattr, naming the path")
    func notATerminal() throws {
        let error = #expect(throws: SerialPortError.self) { try SerialPort(path: "/dev/null", baudRate: 9600) }
        #expect(error?.reason == .system(operation: "tcgetattr", errno: .notTerminal))
        #expect(error?.description == "/dev/null: tcgetattr: Inappropriate ioctl for device")
    }

    @Test("every supported baud rate opens; others are refused before opening")
    func baudRates() throws {
        let pty = try PseudoTerminal()
        for rate in SerialPort.supportedBaudRates {
            let port = try SerialPort(path: pty.devicePath, baudRate: rate)
            #expect(port.baudRate == rate)
        }
        for rate in [0, 300, 1200, 2400, 14400, 76800, 921600, -9600] {
            let error = #expect(throws: SerialPortError.self) { try SerialPort(path: pty.devicePath, baudRate: rate) }
            #expect(error?.reason == .unsupportedBaudRate(rate))
            #expect(error?.description.contains("unsupported baud rate \(rate)") == true)
        }
    }

    @Test("the port is left raw 8N1 with CLOCAL and CREAD, VMIN 0 and VTIME 0, at the speed asked")
    func termiosSettings() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath, baudRate: 38400)
        var t = termios()
        #expect(tcgetattr(port.descriptor.rawValue, &t) == 0)
        #expect(cfgetispeed(&t) == speed_t(B38400))
        #expect(cfgetospeed(&t) == speed_t(B38400))
        func bits(_ flags: tcflag_t...) -> tcflag_t { flags.reduce(0, |) }
        let cflag = t.c_cflag, lflag = t.c_lflag, iflag = t.c_iflag, oflag = t.c_oflag
        #expect(cflag & bits(tcflag_t(CSIZE)) == tcflag_t(CS8))
        #expect(cflag & bits(tcflag_t(PARENB), tcflag_t(CSTOPB), tcflag_t(CRTSCTS)) == 0)
        #expect(cflag & bits(tcflag_t(CLOCAL), tcflag_t(CREAD)) == bits(tcflag_t(CLOCAL), tcflag_t(CREAD)))
        #expect(lflag & bits(tcflag_t(ICANON), tcflag_t(ECHO), tcflag_t(ISIG)) == 0)
        #expect(iflag & bits(tcflag_t(ICRNL), tcflag_t(IXON)) == 0)
        #expect(oflag & bits(tcflag_t(OPOST)) == 0)
        withUnsafeBytes(of: &t.c_cc) { cc in
            #expect(cc[Int(VMIN)] == 0)
            #expect(cc[Int(VTIME)] == 0)
        }
        let flags = fcntl(port.descriptor.rawValue, F_GETFL)
        #expect(flags & O_NONBLOCK != 0)
        #expect(fcntl(port.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("bytes written to the port come out of the master")
    func writeToDevice() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath, baudRate: 9600)
        let command = Array("$PMTK220,1000*1F\r\n".utf8)
        #expect(try command.withUnsafeBytes { try port.write($0) } == command.count)
        var buffer = [UInt8](repeating: 0, count: 64)
        var got: [UInt8] = []
        var p = pollfd(fd: pty.master.rawValue, events: Int16(POLLIN), revents: 0)
        while got.count < command.count, poll(&p, 1, 10_000) == 1 {
            let n = try buffer.withUnsafeMutableBytes { try pty.master.read(into: $0) }
            got += buffer[..<n]
        }
        #expect(got == command)
    }
}
