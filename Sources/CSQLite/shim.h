// CSQLite — the system SQLite 3 library (Debian: libsqlite3-dev), seen from Swift.
//
// Only FencepostLinux/SQLite/ uses this module. `SQLITE_TRANSIENT` and `SQLITE_STATIC` are
// macros casting an integer to a function pointer, which Swift does not import; SQLiteCalls.swift
// rebuilds `SQLITE_TRANSIENT` (design §7).
#ifndef FENCEPOST_CSQLITE_SHIM_H
#define FENCEPOST_CSQLITE_SHIM_H
#include <sqlite3.h>

// Syncs the main database's write-ahead log (or rollback journal) to storage now: the same xSync a
// commit makes under `synchronous=FULL`, so a caller can commit under NORMAL, act, and then make
// the commit durable. SQLITE_FCNTL_JOURNAL_POINTER gives the journal's sqlite3_file; a journal
// not open (nothing written yet) has nothing to sync.
static inline int fencepost_sqlite3_sync_journal(sqlite3 *db) {
    sqlite3_file *file = 0;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file);
    if (rc != SQLITE_OK) return rc;
    if (file == 0 || file->pMethods == 0) return SQLITE_OK;
    return file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
}

// The write-ahead log's frame count after each commit, stored in *frames, instead of SQLite's
// default hook, which checkpoints inside the commit once the log passes 1,000 pages: a checkpoint
// syncs the log and the database file, and an alert committed in that turn would wait for both
// before its buzzer. The caller checkpoints after acting (fencepost_sqlite3_checkpoint_passive).
static int fencepost_wal_frames_hook(void *frames, sqlite3 *db, const char *name, int count) {
    (void)db; (void)name;
    *(int *)frames = count;
    return SQLITE_OK;
}
static inline void fencepost_sqlite3_count_wal_frames(sqlite3 *db, int *frames) {
    sqlite3_wal_hook(db, fencepost_wal_frames_hook, frames);
}
static inline int fencepost_sqlite3_checkpoint_passive(sqlite3 *db) {
    return sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, 0, 0);
}
#endif
