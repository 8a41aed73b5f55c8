/* ppp.h -- PPP in HDLC-like framing (RFC 1662): FCS-16, byte stuffing with an ACCM,
 * framing of one packet and unframing of one received frame. Encoders never read past
 * their input; the unframer treats its input as untrusted. */
#ifndef EMU_PPP_H
#define EMU_PPP_H

#include <stddef.h>
#include <stdint.h>

#define EMU_PPP_FLAG       0x7e
#define EMU_PPP_ESC        0x7d
#define EMU_PPP_FCS_INIT   0xffff
#define EMU_PPP_FCS_GOOD   0xf0b8
#define EMU_PPP_ACCM_ALL   0xffffffffu   /* escape every control character (the default) */

#define EMU_PPP_PROTO_IP        0x0021
#define EMU_PPP_PROTO_VJ_COMP   0x002d
#define EMU_PPP_PROTO_VJ_UNCOMP 0x002f
#define EMU_PPP_PROTO_IPV6      0x0057

/* Updates fcs with len bytes of p (RFC 1662 appendix C.2, polynomial 0x8408 reflected). */
uint16_t emu_ppp_fcs16(uint16_t fcs, const uint8_t *p, size_t len);

/* Bytes a frame of protocol proto and payload len would take on the wire, with both flags,
 * address/control, 2-byte protocol, FCS and stuffing under accm. */
size_t emu_ppp_frame_len(uint16_t proto, const uint8_t *payload, size_t len, uint32_t accm);

/* Writes the frame into out (cap bytes). Returns its length, or -ENOSPC. */
long emu_ppp_frame(uint16_t proto, const uint8_t *payload, size_t len, uint32_t accm, uint8_t *out, size_t cap);

/* Unframes one frame from in (flags optional at either end), checks the FCS and returns the
 * payload length, with *proto set; the payload is written to out (cap bytes). Returns
 * -EBADMSG on a bad FCS, a bad escape, a short frame or a flag inside, -ENOSPC if out is small. */
long emu_ppp_unframe(const uint8_t *in, size_t len, uint16_t *proto, uint8_t *out, size_t cap);

#endif
