import Annunciator
import Testing

/// Reminders of deliveries left unanswered by a previous run never delay a new alert: a backlog
/// is one flash, and a new alert pre-empts it.
@Suite("Reminder backlog")
struct ReminderBacklogTests {
    @Test("50 reminders, then a chime due 2.5 s later: the buzzer sounds at once; one flash for all")
    func newAlertIsNotDelayed() {
        var a = Annunciator()
        var out: [OutputChange] = []
        for i in 0 ..< 50 { out += a.remind("old/\(i)", at: ms(1000)) }
        out += drain(&a, until: ms(3500))
        out += a.start("new", pattern: .chime, level: .normal, at: ms(3500))
        let buzzerOn = out.first { $0.output == .buzzer && $0.isOn }
        #expect(buzzerOn?.time == ms(3500), "\(out)")
        #expect(out.filter { $0.output == .led && $0.isOn }.count == 2, "one summary flash, then the chime's LED: \(out)")
        #expect(a.unacknowledged.count == 51 && a.isOn(.badge))
        #expect(a.remindersSummarised == 49)
    }

    @Test("a new alert pre-empts a reminder flash that plays")
    func preemptsPlayingFlash() {
        var a = Annunciator()
        _ = a.remind("old", at: ms(1000))
        #expect(a.playingID == "old")
        let c = a.start("new", pattern: .chime, level: .normal, at: ms(1200))
        #expect(c.contains { $0.output == .buzzer && $0.isOn && $0.time == ms(1200) }, "\(c)")
        #expect(a.playingID == "new")
        #expect(a.isActive("old"), "the reminder stays unanswered")
    }

    @Test("a new alert goes ahead of a waiting reminder flash")
    func aheadOfWaitingFlash() {
        var a = Annunciator()
        _ = a.start("first", pattern: .chime, level: .normal, at: ms(0))
        _ = a.remind("old", at: ms(10))
        _ = a.start("second", pattern: .chime, level: .normal, at: ms(20))
        var order: [String] = a.playingID.map { [$0] } ?? []
        while let d = a.nextDeadline, d < ms(20_000) {
            _ = a.advance(to: d)
            if let p = a.playingID, order.last != p { order.append(p) }
        }
        #expect(order == ["first", "second", "old"], "\(order)")
    }
}
