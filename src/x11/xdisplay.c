/* xdisplay.c -- display names, upstream connections and Xauthority entries.
 * Xauthority files are read and written with libXau, under its lock, as xauth(1) does. */
#include "x11/xdisplay.h"

#include "common/buf.h"
#include "common/net.h"
#include "x11/xwire.h"

#include <X11/X.h>
#include <X11/Xauth.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int xdisplay_parse(const char *name, struct xdisplay_addr *out)
{
    memset(out, 0, sizeof *out);
    if (!name)
        return -EINVAL;
    const char *colon = strrchr(name, ':');
    if (!colon || colon - name >= (long)sizeof out->host)
        return -EINVAL;
    size_t hlen = (size_t)(colon - name);
    memcpy(out->host, name, hlen);
    out->host[hlen] = 0;
    char *end;
    long n = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || n < 0 || n > 65535 - 6000 || (*end && *end != '.'))
        return -EINVAL;
    out->number = (int)n;
    if (strcmp(out->host, "unix") == 0 || hlen == 0)
        out->host[0] = 0;
    else
        out->tcp = true;
    return 0;
}

int xdisplay_connect(const struct xdisplay_addr *a)
{
    char path[64], port[16];
    if (a->tcp) {
        snprintf(port, sizeof port, "%d", 6000 + a->number);
        return net_tcp_connect(a->host, port);
    }
    /* Like libxcb: the abstract socket first, then the file. */
    snprintf(path, sizeof path, "/tmp/.X11-unix/X%d", a->number);
    int fd = net_unix_connect(path, 1);
    return fd >= 0 ? fd : net_unix_connect(path, 0);
}

const char *xauth_file(void)
{
    return XauFileName();
}

static void local_host(char *out, size_t cap)
{
    if (gethostname(out, cap) != 0)
        out[0] = 0;
    out[cap - 1] = 0;
}

int xauth_lookup(const struct xdisplay_addr *a, uint8_t *cookie, size_t *cookie_len, size_t cap)
{
    char host[256], num[16];
    unsigned short family = FamilyLocal;
    const char *addr = host;
    size_t addr_len;
    struct in_addr in4;
    local_host(host, sizeof host);
    addr_len = strlen(host);
    if (a->tcp && inet_pton(AF_INET, a->host, &in4) == 1 && (ntohl(in4.s_addr) >> 24) != 127) {
        family = FamilyInternet;
        addr = (const char *)&in4;
        addr_len = 4;
    }
    snprintf(num, sizeof num, "%d", a->number);
    char *types[] = { XAUTH_COOKIE_NAME };
    int type_lens[] = { (int)strlen(XAUTH_COOKIE_NAME) };
    Xauth *x = XauGetBestAuthByAddr(family, (unsigned short)addr_len, addr, (unsigned short)strlen(num), num, 1,
                                    types, type_lens);
    if (!x)
        return -ENOENT;
    int rc = -ENOENT;
    if (x->data_length <= cap) {
        memcpy(cookie, x->data, x->data_length);
        *cookie_len = x->data_length;
        rc = 0;
    }
    XauDisposeAuth(x);
    return rc;
}

/* Rewrites file keeping every entry but ours for display `number`, then appends `extra`. */
static int xauth_rewrite(const char *file, int number, Xauth *const *extra, int n_extra)
{
    char num[16], host[256];
    snprintf(num, sizeof num, "%d", number);
    local_host(host, sizeof host);
    if (XauLockAuth(file, 10, 1, 0) != LOCK_SUCCESS)
        return -EBUSY;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tincan-%d", file, (int)getpid());
    int rc = 0;
    FILE *in = fopen(file, "rb");
    mode_t old = umask(077);
    FILE *out = fopen(tmp, "wb");
    umask(old);
    if (!out) {
        rc = -errno;
        goto done;
    }
    Xauth *e;
    while (in && (e = XauReadAuth(in))) {
        bool ours = e->number_length == strlen(num) && memcmp(e->number, num, e->number_length) == 0 &&
                    ((e->family == FamilyLocal && e->address_length == strlen(host) &&
                      memcmp(e->address, host, e->address_length) == 0) ||
                     (e->family == FamilyInternet && e->address_length == 4 &&
                      memcmp(e->address, "\x7f\x00\x00\x01", 4) == 0));
        if (!ours && XauWriteAuth(out, e) != 1)
            rc = -EIO;
        XauDisposeAuth(e);
    }
    for (int i = 0; i < n_extra; i++)
        if (XauWriteAuth(out, extra[i]) != 1)
            rc = -EIO;
    if (fclose(out) != 0)
        rc = -EIO;
    if (rc == 0 && rename(tmp, file) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
done:
    if (in)
        fclose(in);
    XauUnlockAuth(file);
    return rc;
}

int xauth_add(const char *file, int number, const uint8_t cookie[XAUTH_COOKIE_SIZE], bool tcp)
{
    char num[16], host[256];
    snprintf(num, sizeof num, "%d", number);
    local_host(host, sizeof host);
    Xauth local = {
        .family = FamilyLocal, .address_length = (unsigned short)strlen(host), .address = host,
        .number_length = (unsigned short)strlen(num), .number = num,
        .name_length = (unsigned short)strlen(XAUTH_COOKIE_NAME), .name = (char *)XAUTH_COOKIE_NAME,
        .data_length = XAUTH_COOKIE_SIZE, .data = (char *)cookie,
    };
    Xauth inet = local;
    inet.family = FamilyInternet;
    inet.address_length = 4;
    inet.address = (char *)"\x7f\x00\x00\x01";
    Xauth *extra[] = { &local, &inet };
    return xauth_rewrite(file, number, extra, tcp ? 2 : 1);
}

int xauth_remove(const char *file, int number)
{
    return xauth_rewrite(file, number, NULL, 0);
}

int xdisplay_setup_request(const struct xdisplay_addr *a, struct buf *out, bool msb, uint16_t major, uint16_t minor)
{
    uint8_t cookie[256];
    size_t cookie_len = 0;
    bool have = xauth_lookup(a, cookie, &cookie_len, sizeof cookie) == 0;
    return xw_build_setup_request(out, msb, major, minor, have ? XAUTH_COOKIE_NAME : "",
                                  have ? strlen(XAUTH_COOKIE_NAME) : 0, cookie, have ? cookie_len : 0);
}
