/* fonttab.c -- the reply model of font tables (the QueryFont shape), as separate streams
 * the zstd stage codes well: the distinct metrics (sorted, as per-field differences), a
 * bitmap of the glyphs present, then the number of each present glyph's metrics. A table
 * may be coded against an earlier one of the same size (the bold of a family after its
 * medium, a font queried twice): each present glyph then as its difference from that
 * table's glyph for the same character. Both ends keep the last tables coded this way
 * (docs/PROTOCOL.md 5). Runs once per large reply: linear in the table, plus a sort of
 * its distinct metrics. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcodec/xcodec_private.h"

#define FT_HEAD 32       /* a reply's body (xcodec's) starts after its first 32 bytes */
#define FT_FIXED 28      /* QueryFont reply bytes 32-59, before its properties */
_Static_assert(FT_FIXED == XP_QUERY_FONT_REPLY_SIZE - FT_HEAD, "the wire-frozen fixed part of a font table");
/* A field of the QueryFont reply, as a place in its body. */
#define FT_AT(field) (XP_QUERY_FONT_REPLY_##field##_AT - FT_HEAD)
#define FT_CI 12         /* a charinfo: six 16-bit fields */
#define FT_IDX_FAR 254   /* a literal at 254 or beyond: a varint follows */

void xc_fonttabs_free(struct xc_fonttabs *ft)
{
    for (unsigned i = 0; i < XC_FONTTABS; i++)
        free(ft->t[i].ci);
    memset(ft, 0, sizeof *ft);
}

/* The i-th latest table (0 newest), or NULL. */
static const struct xc_fonttab *ft_get(const struct xc_fonttabs *ft, unsigned i)
{
    if (!ft || i >= XC_FONTTABS)
        return NULL;
    const struct xc_fonttab *t = &ft->t[(ft->head + XC_FONTTABS - i) % XC_FONTTABS];
    return t->ci ? t : NULL;
}

bool xc_fonttab_shape(const uint8_t *body, uint32_t blen, bool msb, uint32_t *fixed, uint32_t *nci)
{
    if (blen < FT_FIXED)
        return false;
    uint32_t np = ld16(body + FT_AT(PROPERTIES_LEN), msb);
    *nci = ld32(body + FT_AT(CHAR_INFOS_LEN), msb);
    *fixed = FT_FIXED + 8 * np;
    return (uint64_t)*fixed + (uint64_t)FT_CI * *nci == blen && *nci > 0;
}

int xc_fonttab_remember(struct xc_fonttabs *ft, const uint8_t *body, uint32_t blen, bool msb)
{
    uint32_t fixed, nci;
    if (!xc_fonttab_shape(body, blen, msb, &fixed, &nci) || nci > XC_FONTTAB_MAX)
        return 0;
    unsigned h = (ft->head + 1) % XC_FONTTABS;
    struct xc_fonttab *t = &ft->t[h];
    uint8_t *p = realloc(t->ci, (size_t)FT_CI * nci);
    if (!p)
        return -ENOMEM;
    memcpy(p, body + fixed, (size_t)FT_CI * nci);
    t->ci = p, t->n = nci, ft->head = h;
    return 0;
}

static bool is_zero(const uint8_t *ci)
{
    static const uint8_t zero[FT_CI];
    return memcmp(ci, zero, FT_CI) == 0;
}

/* The symbol of a present glyph: itself, or its difference from the reference's glyph. */
static void symbol(const uint8_t *ci, const uint8_t *ref, bool msb, uint8_t *sym)
{
    if (!ref || is_zero(ref)) {
        memcpy(sym, ci, FT_CI);
        return;
    }
    for (unsigned f = 0; f < FT_CI; f += 2)
        st16(sym + f, (uint16_t)(ld16(ci + f, msb) - ld16(ref + f, msb)), msb);
}

static void unsymbol(const uint8_t *sym, const uint8_t *ref, bool msb, uint8_t *ci)
{
    if (!ref || is_zero(ref)) {
        memcpy(ci, sym, FT_CI);
        return;
    }
    for (unsigned f = 0; f < FT_CI; f += 2)
        st16(ci + f, (uint16_t)(ld16(sym + f, msb) + ld16(ref + f, msb)), msb);
}

/* The presence predicted for each glyph: set p's ideographs (1-3), none for 0. A glyph's
 * character is found from the table's ranges of first and second bytes (a one-byte font
 * has first bytes 0 to 0), and only U+4E00-U+9FFF are predicted. XORs the prediction
 * into bm (nci bits). */
static void ft_predict(const uint8_t *body, bool msb, uint32_t nci, unsigned set, uint8_t *bm)
{
    uint16_t min2 = ld16(body + FT_AT(MIN_CHAR_OR_BYTE2), msb), max2 = ld16(body + FT_AT(MAX_CHAR_OR_BYTE2), msb);
    if (set == 0 || set > XC_CJK_SETS || max2 < min2)
        return;
    const uint8_t *bits = xc_cjk_sets[set - 1];
    uint32_t cols = max2 - min2 + 1u;
    for (uint32_t i = 0; i < nci; i++) {
        uint64_t code = ((uint64_t)body[16] + i / cols) * 256 + min2 + i % cols;
        if (code < XC_CJK_FIRST || code >= XC_CJK_FIRST + 8u * XC_CJK_BYTES)
            continue;
        uint32_t u = (uint32_t)(code - XC_CJK_FIRST);
        if (bits[u >> 3] >> (u & 7) & 1)
            bm[i >> 3] ^= (uint8_t)(1u << (i & 7));
    }
}

static unsigned popcount8(uint8_t b)
{
    unsigned n = 0;
    for (; b; b &= (uint8_t)(b - 1))
        n++;
    return n;
}

/* Distinct symbols by open addressing; entries are literal numbers. */
struct ft_hash {
    uint32_t *slot; /* literal + 1, 0 empty */
    uint32_t mask;
};

static uint32_t ft_hash_of(const uint8_t *s)
{
    uint32_t h = 2166136261u;
    for (unsigned i = 0; i < FT_CI; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

/* One coding of the glyphs: each present glyph's symbol as the number of a distinct one
 * (in order of first use), the distinct symbols, and how often the number changes. */
static int ft_code(const uint8_t *ci, uint32_t nci, const uint8_t *ref, bool msb, struct ft_hash *h,
                   uint32_t *ids, uint32_t *nids, struct buf *lits, uint32_t *changes)
{
    uint32_t nlit = 0, last = ~0u, n = 0;
    *changes = 0;
    memset(h->slot, 0, ((size_t)h->mask + 1) * sizeof *h->slot);
    for (uint32_t i = 0; i < nci; i++) {
        const uint8_t *c = ci + (size_t)FT_CI * i;
        if (is_zero(c))
            continue;
        uint8_t sym[FT_CI];
        symbol(c, ref ? ref + (size_t)FT_CI * i : NULL, msb, sym);
        uint32_t k = ft_hash_of(sym) & h->mask, e;
        while ((e = h->slot[k]) && memcmp(buf_head(lits) + (size_t)FT_CI * (e - 1), sym, FT_CI))
            k = (k + 1) & h->mask;
        if (!e) {
            if (buf_append(lits, sym, FT_CI) < 0)
                return -ENOMEM;
            e = h->slot[k] = ++nlit;
        }
        ids[n++] = e - 1;
        *changes += e != last;
        last = e;
    }
    *nids = n;
    return 0;
}

/* A literal's sort key: its fields as big-endian numbers, so that bytes compare as they do. */
struct ft_key {
    uint8_t key[FT_CI];
    uint32_t id;
};

static int key_cmp(const void *a, const void *b)
{
    return memcmp(((const struct ft_key *)a)->key, ((const struct ft_key *)b)->key, FT_CI);
}

/* The literals sorted, each field a column of differences from the previous literal's;
 * then the bitmap and each present glyph's literal number in that order. */
static int ft_emit(const uint8_t *body, const uint8_t *ci, uint32_t nci, bool msb, const uint32_t *ids,
                   uint32_t nids, const struct buf *lits, struct buf *out)
{
    size_t nlit = lits->len / FT_CI, bm = ((size_t)nci + 7) / 8;
    struct ft_key *k = malloc((nlit + 1) * sizeof *k);
    uint32_t *rank = malloc((nlit + 1) * sizeof *rank);
    int rc = k && rank ? 0 : -ENOMEM;
    for (size_t l = 0; l < nlit && rc == 0; l++) {
        for (unsigned f = 0; f < FT_CI; f += 2)
            st16(k[l].key + f, ld16(buf_head(lits) + FT_CI * l + f, msb), true);
        k[l].id = (uint32_t)l;
    }
    if (rc == 0) {
        qsort(k, nlit, sizeof *k, key_cmp);
        rc = buf_put_varint(out, nlit);
    }
    for (unsigned f = 0; f < FT_CI && rc == 0; f += 2) {
        uint16_t prev = 0;
        for (size_t l = 0; l < nlit && rc == 0; l++) {
            uint16_t v = ld16(k[l].key + f, true);
            rc = buf_put_varint(out, xc_zz16((uint16_t)(v - prev)));
            prev = v;
        }
    }
    for (size_t l = 0; l < nlit && rc == 0; l++)
        rank[k[l].id] = (uint32_t)l;
    uint8_t *o = rc == 0 ? buf_append_space(out, 1 + bm) : NULL;
    if (rc == 0 && !o)
        rc = -ENOMEM;
    if (rc == 0) {
        uint8_t *map = o + 1;
        memset(map, 0, bm);
        for (uint32_t i = 0; i < nci; i++)
            if (!is_zero(ci + (size_t)FT_CI * i))
                map[i >> 3] |= (uint8_t)(1u << (i & 7));
        /* The set that leaves the fewest bits set (a CJK font holds one of them) */
        size_t best = 0, fewest = 0;
        for (size_t b = 0; b < bm; b++)
            fewest += popcount8(map[b]);
        for (unsigned set = 1; set <= XC_CJK_SETS && fewest; set++) {
            ft_predict(body, msb, nci, set, map);
            size_t n = 0;
            for (size_t b = 0; b < bm; b++)
                n += popcount8(map[b]);
            ft_predict(body, msb, nci, set, map); /* undone */
            if (n < fewest)
                fewest = n, best = set;
        }
        o[0] = (uint8_t)best;
        ft_predict(body, msb, nci, (unsigned)best, map);
    }
    for (uint32_t g = 0; g < nids && rc == 0; g++) {
        uint32_t r = rank[ids[g]];
        uint8_t b = r < FT_IDX_FAR ? (uint8_t)r : FT_IDX_FAR;
        rc = buf_append(out, &b, 1);
        if (rc == 0 && r >= FT_IDX_FAR)
            rc = buf_put_varint(out, r - FT_IDX_FAR);
    }
    free(k);
    free(rank);
    return rc < 0 ? -ENOMEM : 0;
}

int xc_fonttab_encode(const struct xc_fonttabs *ft, const uint8_t *body, uint32_t blen, bool msb, struct buf *out)
{
    uint32_t fixed, nci;
    if (!xc_fonttab_shape(body, blen, msb, &fixed, &nci) || nci > (1u << 23))
        return 1; /* beyond any 2-byte font: the hash below stays at most half full */
    const uint8_t *ci = body + fixed;
    struct ft_hash h;
    uint32_t size = 64, nids, changes;
    while (size < 2 * nci)
        size *= 2;
    h.mask = size - 1;
    h.slot = malloc((size_t)size * sizeof *h.slot);
    uint32_t *ids = malloc((size_t)nci * sizeof *ids);
    struct buf lits = { 0 };
    int rc = h.slot && ids ? 0 : -ENOMEM;
    /* The cheapest of no reference and each same-sized table, by a guess of what zstd
     * leaves: a literal's bytes, and a byte per change of number (runs cost little). */
    unsigned best = 0;
    uint64_t best_cost = ~0ull;
    for (unsigned r = 0; r <= XC_FONTTABS && rc == 0; r++) {
        const struct xc_fonttab *t = r ? ft_get(ft, r - 1) : NULL;
        if (r && (!t || t->n != nci))
            continue;
        buf_clear(&lits);
        if ((rc = ft_code(ci, nci, t ? t->ci : NULL, msb, &h, ids, &nids, &lits, &changes)) < 0)
            break;
        uint64_t cost = (uint64_t)lits.len / 3 + changes;
        if (cost < best_cost)
            best_cost = cost, best = r;
    }
    const struct xc_fonttab *t = best ? ft_get(ft, best - 1) : NULL;
    buf_clear(&lits);
    if (rc == 0)
        rc = ft_code(ci, nci, t ? t->ci : NULL, msb, &h, ids, &nids, &lits, &changes);
    uint8_t r8 = (uint8_t)best;
    if (rc == 0 && (buf_append(out, body, fixed) < 0 || buf_append(out, &r8, 1) < 0))
        rc = -ENOMEM;
    if (rc == 0)
        rc = ft_emit(body, ci, nci, msb, ids, nids, &lits, out);
    free(h.slot);
    free(ids);
    buf_free(&lits);
    return rc;
}

int xc_fonttab_decode(const struct xc_fonttabs *ft, uint8_t *dst, uint32_t blen, bool msb, struct rd *r)
{
    const uint8_t *p;
    uint32_t fixed, nci;
    uint8_t ref_no;
    uint64_t nlit;
    if (rd_bytes(r, &p, FT_FIXED) < 0 || !xc_fonttab_shape(p, blen, msb, &fixed, &nci))
        return -EBADMSG;
    memcpy(dst, p, FT_FIXED);
    if (rd_bytes(r, &p, fixed - FT_FIXED) < 0 || rd_u8(r, &ref_no) < 0 || rd_varint(r, &nlit) < 0 || nlit > nci)
        return -EBADMSG;
    memcpy(dst + FT_FIXED, p, fixed - FT_FIXED);
    const struct xc_fonttab *t = ref_no ? ft_get(ft, ref_no - 1u) : NULL;
    if ((ref_no && (!t || t->n != nci)) || nlit * 6 > rd_left(r))
        return -EBADMSG; /* a literal takes at least 6 bytes */
    uint8_t *lit = malloc((size_t)FT_CI * nlit + 1);
    if (!lit)
        return -ENOMEM;
    int rc = 0;
    for (unsigned f = 0; f < FT_CI && rc == 0; f += 2) {
        uint16_t prev = 0;
        for (size_t l = 0; l < nlit; l++) {
            uint64_t z;
            if (rd_varint(r, &z) < 0 || z > 0xffff) {
                rc = -EBADMSG;
                break;
            }
            prev = (uint16_t)(prev + xc_unzz16(z));
            st16(lit + FT_CI * l + f, prev, msb);
        }
    }
    const uint8_t *sent;
    uint8_t set = 0, *bm = NULL;
    size_t bml = ((size_t)nci + 7) / 8;
    if (rc == 0 && (rd_u8(r, &set) < 0 || set > XC_CJK_SETS || rd_bytes(r, &sent, bml) < 0))
        rc = -EBADMSG;
    if (rc == 0 && (nci & 7) && sent[bml - 1] >> (nci & 7))
        rc = -EBADMSG; /* unused bits of the bitmap are zero */
    if (rc == 0 && !(bm = malloc(bml)))
        rc = -ENOMEM;
    if (rc == 0) {
        memcpy(bm, sent, bml);
        ft_predict(dst, msb, nci, set, bm);
    }
    uint8_t *ci = dst + fixed;
    for (uint32_t i = 0; i < nci && rc == 0; i++, ci += FT_CI) {
        if (!(bm[i >> 3] >> (i & 7) & 1)) {
            memset(ci, 0, FT_CI);
            continue;
        }
        uint8_t b;
        uint64_t e;
        if (rd_u8(r, &b) < 0 || b > FT_IDX_FAR) {
            rc = -EBADMSG;
            break;
        }
        e = b;
        if (b == FT_IDX_FAR && (rd_varint(r, &e) < 0 || (e += FT_IDX_FAR) < FT_IDX_FAR))
            e = ~0ull;
        if (e >= nlit) {
            rc = -EBADMSG;
            break;
        }
        unsymbol(lit + FT_CI * e, t ? t->ci + (size_t)FT_CI * i : NULL, msb, ci);
    }
    free(lit);
    free(bm);
    return rc;
}
