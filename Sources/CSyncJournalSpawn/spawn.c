// Starting a test's child process with posix_spawn, every descriptor above
// standard error closed in the child by the spawn itself. Foundation's
// Process finds the descriptors to close by scanning /proc/self/fd, and its
// scan reads past glibc's directory buffer, crashing a test run now and then.
#define _GNU_SOURCE
#include "CSyncJournalSpawn.h"

#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int sj_spawn(const char *path, char *const argv[], const char *directory, int input, int output, int error, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) { posix_spawn_file_actions_destroy(&actions); return result; }
    int sources[3] = { input, output, error };
    for (int target = 0; target < 3 && result == 0; target++) {
        if (sources[target] >= 0) result = posix_spawn_file_actions_adddup2(&actions, sources[target], target);
    }
    if (result == 0 && directory != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, directory);
#if defined(__APPLE__)
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_CLOEXEC_DEFAULT);
    // Under CLOEXEC_DEFAULT only descriptors named by an action survive: name 0 to 2 when inherited.
    for (int target = 0; target < 3 && result == 0; target++) {
        if (sources[target] < 0) result = posix_spawn_file_actions_addinherit_np(&actions, target);
    }
#else
    if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int sj_wait(pid_t pid, int block, int *exited, int *code) {
    int status = 0;
    pid_t ended;
    do { ended = waitpid(pid, &status, block ? 0 : WNOHANG); } while (ended < 0 && errno == EINTR);
    if (ended < 0) return -errno;
    if (ended == 0) return 0;
    if (WIFEXITED(status)) { *exited = 1; *code = WEXITSTATUS(status); }
    else { *exited = 0; *code = WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
    return 1;
}
