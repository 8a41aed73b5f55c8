/* vj.h -- Van Jacobson TCP/IP header compression (RFC 1144) for IPv4: a compressor on the
 * sending end of a serial line and a decompressor on the receiving end, each with 16 slots.
 * The decompressor reads untrusted bytes and tosses packets after an error until resync. */
#ifndef EMU_VJ_H
#define EMU_VJ_H

#include <stddef.h>
#include <stdint.h>

#define EMU_VJ_SLOTS   16
#define EMU_VJ_HDR_MAX 120            /* IP + TCP header with options, at most 60 + 60 */

enum emu_vj_type {
    EMU_VJ_TYPE_IP = 0,               /* not compressible: sent as is (PPP 0x0021) */
    EMU_VJ_TYPE_UNCOMPRESSED,         /* full header, protocol byte = slot (PPP 0x002f) */
    EMU_VJ_TYPE_COMPRESSED,           /* compressed header (PPP 0x002d) */
};

struct emu_vj_slot {
    uint8_t hdr[EMU_VJ_HDR_MAX];      /* the last header sent / received in this slot */
    unsigned hdr_len;                 /* 0: slot unused */
    uint32_t last_use;                /* compressor: for least-recently-used reuse */
};

struct emu_vj_comp {
    struct emu_vj_slot slot[EMU_VJ_SLOTS];
    int last_sent;                    /* slot of the last packet sent, -1 none */
    uint32_t clock;
};

struct emu_vj_decomp {
    struct emu_vj_slot slot[EMU_VJ_SLOTS];
    int last_recv;                    /* slot of the last packet received, -1 none */
    int toss;                         /* after an error: drop COMPRESSED packets until one names its slot */
};

void emu_vj_comp_init(struct emu_vj_comp *c);
void emu_vj_decomp_init(struct emu_vj_decomp *d);

/* Compresses the IPv4 packet pkt[0..len) into out (cap >= len). Returns the output length
 * and sets *type; TYPE_IP output is a copy. -EINVAL if cap is too small. hdr_in/hdr_out
 * (may be NULL) receive header sizes before and after, for statistics. */
long emu_vj_compress(struct emu_vj_comp *c, const uint8_t *pkt, size_t len, enum emu_vj_type *type,
                     uint8_t *out, size_t cap, unsigned *hdr_in, unsigned *hdr_out);

/* Rebuilds the IPv4 packet from in[0..len) of the given type into out (cap bytes). Returns
 * its length; -EBADMSG for a malformed input (and starts tossing), -EAGAIN for a packet
 * tossed while waiting for resync, -ENOSPC if out is too small. */
long emu_vj_decompress(struct emu_vj_decomp *d, enum emu_vj_type type, const uint8_t *in, size_t len,
                       uint8_t *out, size_t cap);

/* The link reports that a packet the compressor saw never reached the line (or was lost on
 * it): forget every slot, so the next packet of each connection goes UNCOMPRESSED and the
 * decompressor can never apply a delta to a header it did not get. */
void emu_vj_comp_lost(struct emu_vj_comp *c);

/* The link lost or damaged a frame: toss COMPRESSED packets until resync (RFC 1144 4.3). */
void emu_vj_decomp_error(struct emu_vj_decomp *d);

#endif
