// The system SQLite (libsqlite3-dev): journal-bench's baseline and sync-server's storage.
#include <sqlite3.h>
// glibc's heap statistics (mallinfo2), which journal-bench samples for peak memory.
#if defined(__linux__) && __has_include(<malloc.h>)
#include <malloc.h>
#endif
