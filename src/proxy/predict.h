/* predict.h -- answers the app side can give without crossing the link, because the
 * server's answer is known exactly: today QueryExtension (an extension's presence and
 * opcodes never change while the server runs). Both sides learn the same facts from the
 * same replies; the display side checks each real reply against what was predicted. */
#ifndef TINCAN_PREDICT_H
#define TINCAN_PREDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "x11/xstream.h"

struct predictor;

int predict_new(struct predictor **out);   /* 0 or -ENOMEM */
void predict_free(struct predictor *p);
/* Learns from a reply on its way to a client (as the client will see it). */
void predict_learn(struct predictor *p, const struct msg_class *cls, const uint8_t *reply, uint32_t size);
/* App side: if the request of class cls (sequence number seq) has a known answer, appends
 * the reply the server would send to out and returns true. */
bool predict_answer(const struct predictor *p, const struct msg_class *cls, uint16_t seq, bool msb, struct buf *out);
/* Display side: whether a real reply is exactly the one the app side predicted. */
bool predict_matches(const struct predictor *p, const struct msg_class *cls, const uint8_t *reply, uint32_t size);

#endif
