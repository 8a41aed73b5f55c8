/* predict.h -- answers the app side can give without crossing the link, because the
 * server's answer is known exactly: QueryExtension (an extension's presence and opcodes
 * never change while the server runs), InternAtom and GetAtomName (an atom, once
 * interned, keeps its name; the predefined atoms are fixed by the protocol). Both sides
 * learn the same facts from the same replies; the display side computes the same answer
 * and checks the server's real reply against it. AllocColor on the default colormap of a
 * TrueColor screen is arithmetic; the formula is trusted once a real reply has matched it. */
#ifndef TINCAN_PREDICT_H
#define TINCAN_PREDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "x11/xstream.h"

struct predictor;

/* Questions of one channel whose answers will teach us something, by sequence number. */
struct predict_question {
    uint32_t seq;
    uint8_t major;
    uint32_t atom;        /* GetAtomName */
    char *name;           /* InternAtom, QueryExtension: owned */
    uint16_t name_len;
};
struct predict_questions {
    struct predict_question *q;
    uint32_t head, len, cap;
};

int predict_new(struct predictor **out);   /* 0 or -ENOMEM */
void predict_free(struct predictor *p);
void predict_questions_free(struct predict_questions *pq);

/* The server's connection setup reply (any client's): learns its TrueColor colormaps. */
void predict_learn_setup(struct predictor *p, const uint8_t *setup, size_t size, bool msb);
/* A request crossing to the server (number seq): remembers what it asks, if we can learn from it. */
void predict_ask(struct predict_questions *pq, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                 uint32_t seq, bool msb);
/* A reply (to request seq) as the client sees it: learns what it tells. */
void predict_learn(struct predictor *p, struct predict_questions *pq, const struct msg_class *cls, uint32_t seq,
                   const uint8_t *reply, uint32_t size, bool msb);
/* If the request's answer is known, appends the reply the server would send to out. */
bool predict_answer(const struct predictor *p, const struct msg_class *cls, const uint8_t *req, uint32_t size,
                    uint16_t seq, bool msb, struct buf *out);

#endif
