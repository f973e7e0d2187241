// The readiness queue behind SyncJournalPlatform's EventPoller: epoll on
// Linux, kqueue elsewhere, both level-triggered, one report per descriptor.
#include "CSyncJournalEventPoll.h"

#include <errno.h>
#include <string.h>

#if defined(__linux__)
#include <sys/epoll.h>

int sj_poller_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int sj_poller_set(int poller, int descriptor, int readable, int writable, int adding) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = (readable ? EPOLLIN | EPOLLRDHUP : 0) | (writable ? EPOLLOUT : 0);
    event.data.fd = descriptor;
    return epoll_ctl(poller, adding ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, &event);
}

int sj_poller_remove(int poller, int descriptor) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    return epoll_ctl(poller, EPOLL_CTL_DEL, descriptor, &event);
}

int sj_poller_wait(int poller, sj_poll_event *events, int capacity, int timeout_milliseconds) {
    enum { batch = 256 };
    struct epoll_event ready[batch];
    int wanted = capacity < batch ? capacity : batch;
    int count = epoll_wait(poller, ready, wanted, timeout_milliseconds);
    for (int index = 0; index < count; index++) {
        unsigned flags = ready[index].events;
        events[index].descriptor = ready[index].data.fd;
        events[index].readable = (flags & (EPOLLIN | EPOLLRDHUP)) != 0;
        events[index].writable = (flags & EPOLLOUT) != 0;
        events[index].hangup = (flags & (EPOLLHUP | EPOLLERR)) != 0;
    }
    return count;
}

#else
#include <sys/types.h>
#include <sys/event.h>
#include <sys/time.h>
#include <unistd.h>
#include <fcntl.h>

int sj_poller_create(void) {
    int poller = kqueue();
    if (poller >= 0) fcntl(poller, F_SETFD, FD_CLOEXEC);
    return poller;
}

int sj_poller_set(int poller, int descriptor, int readable, int writable, int adding) {
    (void)adding;
    struct kevent changes[2];
    EV_SET(&changes[0], descriptor, EVFILT_READ, readable ? EV_ADD | EV_ENABLE : EV_ADD | EV_DISABLE, 0, 0, NULL);
    EV_SET(&changes[1], descriptor, EVFILT_WRITE, writable ? EV_ADD | EV_ENABLE : EV_ADD | EV_DISABLE, 0, 0, NULL);
    return kevent(poller, changes, 2, NULL, 0, NULL);
}

int sj_poller_remove(int poller, int descriptor) {
    struct kevent changes[2];
    EV_SET(&changes[0], descriptor, EVFILT_READ, EV_DELETE, 0, 0, NULL);
    EV_SET(&changes[1], descriptor, EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
    // A filter never added reports ENOENT; the descriptor is unwatched either way.
    kevent(poller, changes, 2, NULL, 0, NULL);
    return 0;
}

int sj_poller_wait(int poller, sj_poll_event *events, int capacity, int timeout_milliseconds) {
    enum { batch = 256 };
    struct kevent ready[batch];
    int wanted = capacity < batch ? capacity : batch;
    struct timespec timeout;
    timeout.tv_sec = timeout_milliseconds / 1000;
    timeout.tv_nsec = (long)(timeout_milliseconds % 1000) * 1000000L;
    int count = kevent(poller, NULL, 0, ready, wanted, timeout_milliseconds < 0 ? NULL : &timeout);
    for (int index = 0; index < count; index++) {
        events[index].descriptor = (int)ready[index].ident;
        events[index].readable = ready[index].filter == EVFILT_READ;
        events[index].writable = ready[index].filter == EVFILT_WRITE;
        events[index].hangup = (ready[index].flags & (EV_EOF | EV_ERROR)) != 0;
    }
    return count;
}
#endif
