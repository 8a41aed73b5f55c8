/* predict.c -- the facts behind local answers, and the answers themselves. Only facts
 * that cannot change during a server's life are kept: nothing here is a guess. */
#include "proxy/predict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xproto_tables.h"

#define QE_BODY 24 /* QueryExtension reply bytes 8..31: present, major, first event, first error, pad */

struct predictor {
    struct {
        bool known;
        uint8_t body[QE_BODY];
    } *ext;               /* by xp_extensions index */
};

int predict_new(struct predictor **out)
{
    struct predictor *p = calloc(1, sizeof *p);
    if (!p || !(p->ext = calloc(xp_n_extensions, sizeof *p->ext))) {
        free(p);
        return -ENOMEM;
    }
    *out = p;
    return 0;
}

void predict_free(struct predictor *p)
{
    if (!p)
        return;
    free(p->ext);
    free(p);
}

static bool is_query_extension(const struct msg_class *cls)
{
    return cls->major == XW_OP_QUERY_EXTENSION && cls->query_ext >= 0 && (size_t)cls->query_ext < xp_n_extensions;
}

void predict_learn(struct predictor *p, const struct msg_class *cls, const uint8_t *reply, uint32_t size)
{
    if (cls->kind != MSG_REPLY || !is_query_extension(cls) || size != 32)
        return;
    p->ext[cls->query_ext].known = true;
    memcpy(p->ext[cls->query_ext].body, reply + 8, QE_BODY);
}

bool predict_answer(const struct predictor *p, const struct msg_class *cls, uint16_t seq, bool msb, struct buf *out)
{
    if (cls->kind != MSG_REQUEST || !is_query_extension(cls) || !p->ext[cls->query_ext].known)
        return false;
    uint8_t *r = buf_append_space(out, 32);
    if (!r)
        return false;
    memset(r, 0, 8);
    r[0] = 1; /* Reply; length 0 */
    st16(r + 2, seq, msb);
    memcpy(r + 8, p->ext[cls->query_ext].body, QE_BODY);
    return true;
}

bool predict_matches(const struct predictor *p, const struct msg_class *cls, const uint8_t *reply, uint32_t size)
{
    return cls->kind == MSG_REPLY && is_query_extension(cls) && p->ext[cls->query_ext].known && size == 32 &&
           reply[1] == 0 && ld32(reply + 4, false) == 0 && memcmp(reply + 8, p->ext[cls->query_ext].body, QE_BODY) == 0;
}
