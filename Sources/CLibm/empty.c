// SwiftPM wants one source file in a C target; the module is only the header.
