/* fuzz_predict.c -- libFuzzer target for the local-answer facts: a stream of records
 * (kind byte, major opcode, 2-byte length, bytes) feeds predict_ask (requests),
 * predict_learn (replies) and predict_answer, as both sides of a session would. */
#include <stdint.h>
#include <string.h>

#include "proxy/predict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct predictor *p;
    if (predict_new(&p) < 0)
        return 0;
    struct predict_questions pq = { 0 };
    uint32_t seq = 0;
    size_t at = 0;
    while (at + 4 <= size) {
        uint8_t kind = data[at], major = data[at + 1];
        size_t len = (size_t)data[at + 2] | (size_t)data[at + 3] << 8;
        at += 4;
        if (len > size - at)
            len = size - at;
        const uint8_t *msg = data + at;
        at += len;
        bool msb = kind & 0x80;
        struct msg_class cls = { .major = major, .query_ext = -1 };
        if (major == 98 && len > 0)
            cls.query_ext = (int16_t)(msg[0] % 16);
        struct buf out = { 0 };
        if ((kind & 3) == 0) {          /* a request crossing to the server */
            cls.kind = MSG_REQUEST;
            predict_ask(&pq, &cls, msg, (uint32_t)len, ++seq, msb);
        } else if ((kind & 3) == 1) {   /* a reply to the latest request */
            cls.kind = MSG_REPLY;
            predict_learn(p, &pq, &cls, seq, msg, (uint32_t)len, msb);
        } else {                        /* a request answered here, if it can be */
            cls.kind = MSG_REQUEST;
            if (predict_answer(p, &cls, msg, (uint32_t)len, (uint16_t)seq, msb, &out) &&
                (out.len < 32 || out.len % 4))
                __builtin_trap(); /* an answer is a whole X reply */
        }
        buf_free(&out);
    }
    predict_questions_free(&pq);
    predict_free(p);
    return 0;
}
