import FencepostLinux
import Foundation
import Testing

enum GPIOMachine {
    /// The `/dev/gpiochip*` names this machine has, sorted (none on the CI machines: design §7).
    static var chips: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("gpiochip") }.sorted()
    }

    /// The hint the "not found" message ends with on this machine.
    static var notFoundHint: String {
        chips.isEmpty ? "this machine has no GPIO — use the console backend" : "chips present: \(chips.joined(separator: ", "))"
    }
}

/// libgpiod's error paths. They run on every machine: the chips asked for cannot exist (numbers
/// no board has), and the message's hint is checked against the chips this machine does have.
@Suite("Libgpiod errors")
struct LibgpiodErrorTests {
    func openError(_ chip: String) -> GPIOError? {
        do {
            _ = try LibgpiodBackend(chip: chip)
            return nil
        } catch {
            return error
        }
    }

    @Test("opening a chip that does not exist by name says so and what to use instead")
    func byName() {
        let e = openError("gpiochip977")
        #expect(e?.description == "GPIO chip \"gpiochip977\" not found (No such file or directory); \(GPIOMachine.notFoundHint)")
    }

    @Test("opening one by path gives the same clear error")
    func byPath() {
        let e = openError("/dev/gpiochip977")
        #expect(e?.description == "GPIO chip \"/dev/gpiochip977\" not found (No such file or directory); \(GPIOMachine.notFoundHint)")
    }

    @Test("opening by number or label fails the same way")
    func byNumberOrLabel() {
        for chip in ["977", "fencepost-no-such-label"] {
            guard case .chipNotFound(let name, _, let present)? = openError(chip) else {
                Issue.record("\(chip): \(String(describing: openError(chip)))")
                continue
            }
            #expect(name == chip && present == GPIOMachine.chips)
        }
    }

    @Test("a path that is not a GPIO chip is refused as such")
    func notAChip() {
        let e = openError("/dev/null")
        guard case .notAGPIOChip(let chip, _)? = e else {
            Issue.record("expected notAGPIOChip, got \(String(describing: e))")
            return
        }
        #expect(chip == "/dev/null")
        #expect(e!.description.hasPrefix("\"/dev/null\" is not a GPIO chip ("))
    }

    @Test("messages of the errors that need hardware to happen")
    func otherMessages() {
        let buzzer = GPIOLineSpec(name: "buzzer", offset: 18)
        #expect(GPIOError.lineBusy(chip: "gpiochip0", line: buzzer, consumer: "pwm").description
            == "GPIO line buzzer (BCM 18) on chip \"gpiochip0\" is busy: used by \"pwm\"")
        #expect(GPIOError.lineBusy(chip: "gpiochip0", line: buzzer, consumer: nil).description
            == "GPIO line buzzer (BCM 18) on chip \"gpiochip0\" is busy: used by another program or driver")
        #expect(GPIOError.lineOutOfRange(chip: "gpiochip0", line: GPIOLineSpec(name: "led", offset: 60), lineCount: 58).description
            == "GPIO line 60 for led is out of range: chip \"gpiochip0\" has lines 0…57")
        #expect(GPIOError.permissionDenied(chip: "gpiochip0", errno: .accessDenied).description
            == "cannot open GPIO chip \"gpiochip0\" (Permission denied); add the user to the gpio group (usermod -aG gpio USER) or run the service with SupplementaryGroups=gpio")
        #expect(GPIOError.chipNotFound(chip: "gpiochip4", errno: .noEntry, present: ["gpiochip0", "gpiochip1"]).description
            == "GPIO chip \"gpiochip4\" not found (No such file or directory); chips present: gpiochip0, gpiochip1")
    }
}
