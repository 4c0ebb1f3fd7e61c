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
#endif
