/* xlisten.h -- being an X display: the lock file /tmp/.XN-lock, the sockets
 * /tmp/.X11-unix/XN (file and abstract) and, when asked, TCP 127.0.0.1:6000+N. */
#ifndef TINCAN_XLISTEN_H
#define TINCAN_XLISTEN_H

#include <stdbool.h>

struct xlisten {
    int number;
    int fds[3];        /* file socket, abstract socket, TCP; -1 when absent */
    char lock_path[64], sock_path[64];
};

/* number < 0: the first free display from 10 up (as sshd's X11DisplayOffset). 0 or -errno. */
int xlisten_open(struct xlisten *xl, int number, bool tcp);
void xlisten_close(struct xlisten *xl);

#endif
