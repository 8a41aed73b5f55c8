#!/usr/bin/env python3
# fake-sshd.py -- with FAKE_SSH_RELAY set, fake-ssh runs the "remote" command as ssh and
# sshd would: in a session of its own, its stdin and stdout a socket this process relays
# to its own. Killing this process (the "ssh") is a lost connection: the remote command
# sees its link close and lives on. Exits with the command's status when it ends.
import os, select, socket, sys

cmd = sys.argv[1]
mine, theirs = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.setsid()
    mine.close()
    os.dup2(theirs.fileno(), 0)
    os.dup2(theirs.fileno(), 1)
    os.execvp("sh", ["sh", "-c", cmd])
theirs.close()
with open(os.environ.get("FAKE_SSH_PIDS", "/dev/null"), "a") as f:
    f.write("%d\n" % os.getpid())
stdin, stdout, sock = 0, 1, mine.fileno()
open_in = True
while True:
    r, _, _ = select.select([stdin, sock] if open_in else [sock], [], [])
    if stdin in r:
        data = os.read(stdin, 65536)
        if not data:
            mine.shutdown(socket.SHUT_WR)
            open_in = False
        else:
            mine.sendall(data)
    if sock in r:
        data = os.read(sock, 65536)
        if not data:
            break
        os.write(stdout, data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
