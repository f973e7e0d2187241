#ifndef CSYNCJOURNAL_EVENT_POLL_H
#define CSYNCJOURNAL_EVENT_POLL_H

/// One readiness report of a descriptor: what it can do now.
typedef struct sj_poll_event {
    int descriptor;
    /// Input (or end of file) can be read.
    int readable;
    /// Output can be written.
    int writable;
    /// The peer hung up or the descriptor is in error.
    int hangup;
} sj_poll_event;

/// A new readiness queue (epoll on Linux, kqueue on Darwin and the BSDs),
/// close-on-exec; -1 with errno set on failure.
int sj_poller_create(void);

/// Registers `descriptor` (adding = 1) or changes its interests (adding = 0):
/// input when `readable`, output when `writable`. Level-triggered.
/// 0, or -1 with errno set.
int sj_poller_set(int poller, int descriptor, int readable, int writable, int adding);

/// Stops watching `descriptor` (before it is closed). 0, or -1 with errno set.
int sj_poller_remove(int poller, int descriptor);

/// Waits at most `timeout_milliseconds` (-1: no limit) for readiness and
/// fills up to `capacity` reports; returns how many, or -1 with errno set.
int sj_poller_wait(int poller, sj_poll_event *events, int capacity, int timeout_milliseconds);

#endif
