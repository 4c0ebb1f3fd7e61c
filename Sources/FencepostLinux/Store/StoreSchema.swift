/// The notification store's schema history (`PRAGMA user_version` = number of steps applied).
/// Never edit a shipped step: append a new one.
enum StoreSchema {
    static let migrations: [SQLiteMigration] = [
        .sql("create the notification tables", version1),
        .sql("remember the requests apply installed by fingerprint", version2),
        .sql("the fleet link's outbox", version3),
        .sql("remember the requests the fleet's desired state installed, apart", version4),
    ]

    /// Version 1.
    ///
    /// `seq` columns are the row id and give the order: add order for requests (a replaced
    /// request is deleted and inserted again, so it moves to the end), delivery order, category
    /// order, outcome order. A removed delivery keeps its row with `removed = 1` so that its id
    /// still counts as delivered (duplicate-fire guard); the oldest such rows are pruned.
    static let version1 = """
        CREATE TABLE request (
            seq   INTEGER PRIMARY KEY,
            id    TEXT NOT NULL UNIQUE,
            json  TEXT NOT NULL,
            state TEXT NOT NULL
        );
        CREATE TABLE delivery (
            seq          INTEGER PRIMARY KEY,
            delivery_id  TEXT NOT NULL UNIQUE,
            request_id   TEXT NOT NULL,
            json         TEXT NOT NULL,
            scheduled_at INTEGER,
            delivered_at INTEGER NOT NULL,
            outcome      TEXT NOT NULL,
            response     TEXT,
            responded_at INTEGER,
            removed      INTEGER NOT NULL DEFAULT 0 CHECK (removed IN (0, 1))
        );
        CREATE INDEX delivery_removed ON delivery (removed, seq);
        CREATE TABLE category (
            seq  INTEGER PRIMARY KEY,
            id   TEXT NOT NULL UNIQUE,
            json TEXT NOT NULL
        );
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE outcome (
            seq        INTEGER PRIMARY KEY,
            at         INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            event      TEXT NOT NULL,
            detail     TEXT NOT NULL
        );
        """

    /// Version 2: the requests `apply` installed, one row each (id and a 64-bit fingerprint of the
    /// request's JSON, stored as its signed bit pattern), in install order. Version 1 kept them as
    /// one meta value (`apply.requests`, a JSON object id → request); the agent reads that value
    /// while this table is empty and replaces it with rows at the first apply that writes.
    static let version2 = """
        CREATE TABLE applied_request (
            seq         INTEGER PRIMARY KEY,
            id          TEXT NOT NULL UNIQUE,
            fingerprint INTEGER NOT NULL
        );
        """

    /// Version 3: the fleet link's outbox. One row per event, written in the transaction that
    /// records the event; `seq` is the event's seq (never reused: AUTOINCREMENT, so a seq is not
    /// handed out again after the newest rows were acknowledged and deleted). `body` is the event's
    /// JSON members after v/id/seq (Fleet's FleetEvent.payload puts them together when sending).
    /// `priority`: 0 response and gap, 1 delivery, 2 transition, 3 other. `failed`: the broker's
    /// refusal (PUBACK reason ≥ 0x80), kept for health, not sent again by this process.
    static let version3 = """
        CREATE TABLE outbox (
            seq      INTEGER PRIMARY KEY AUTOINCREMENT,
            kind     TEXT NOT NULL,
            topic    TEXT NOT NULL,
            priority INTEGER NOT NULL,
            body     TEXT NOT NULL,
            created  INTEGER NOT NULL,
            failed   TEXT
        );
        CREATE INDEX outbox_priority ON outbox (priority, seq);
        """

    /// Version 4: the requests the fleet's desired documents installed, as version 2's table holds
    /// the configuration's: apart, so that applying the one never removes what the other installed.
    static let version4 = """
        CREATE TABLE fleet_applied_request (
            seq         INTEGER PRIMARY KEY,
            id          TEXT NOT NULL UNIQUE,
            fingerprint INTEGER NOT NULL
        );
        """
}
