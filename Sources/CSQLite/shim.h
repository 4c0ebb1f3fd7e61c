// CSQLite — the system SQLite 3 library (Debian: libsqlite3-dev), seen from Swift.
//
// Only FencepostLinux/SQLite/ uses this module. `SQLITE_TRANSIENT` and `SQLITE_STATIC` are
// macros casting an integer to a function pointer, which Swift does not import; SQLiteCalls.swift
// rebuilds `SQLITE_TRANSIENT` (design §7).
#ifndef FENCEPOST_CSQLITE_SHIM_H
#define FENCEPOST_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
