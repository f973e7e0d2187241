#ifndef CSYNCJOURNALSPAWN_H
#define CSYNCJOURNALSPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` (NULL-terminated) and the parent's environment,
/// in `directory` (NULL: the parent's), its standard input, output and
/// error the descriptors given (-1: the parent's), and every other
/// descriptor closed in the child, so a pipe another thread of the parent
/// reads never stays open in it. Stores the child's id in `pid`. Returns 0,
/// or the errno of the failure (the child did not start).
int sj_spawn(const char *path, char *const argv[], const char *directory, int input, int output, int error, pid_t *pid);

/// Waits for child `pid` (without blocking when `block` is 0) and returns 1
/// with its end in `exited` (1: it exited with `code`; 0: a signal, its
/// number in `code`), 0 when it still runs, or -errno.
int sj_wait(pid_t pid, int block, int *exited, int *code);

#endif
