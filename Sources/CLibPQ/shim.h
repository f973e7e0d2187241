// The system libpq (libpq-dev): sync-server's PostgreSQL storage.
#include <libpq-fe.h>

// The diagnostic field codes are character macros, which Swift does not import.
static const int CLibPQDiagnosticSQLState = PG_DIAG_SQLSTATE;
static const int CLibPQDiagnosticMessagePrimary = PG_DIAG_MESSAGE_PRIMARY;
static const int CLibPQDiagnosticMessageDetail = PG_DIAG_MESSAGE_DETAIL;
