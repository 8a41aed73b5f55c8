/* fuzz_predict.c -- libFuzzer target for the local-answer facts: a stream of records
 * (kind byte, major opcode, 2-byte length, bytes) feeds predict_ask and predict_track
 * (requests), predict_learn (replies), predict_answer, predict_on_fact (FACT payloads from
 * the link, kinds 2..17), predict_color_check (the display side's colour probes; kind 2),
 * predict_learn_connection (setup replies) and predict_quiet, as both sides of a
 * session would. Kind bits 3..5 name the extension of a request with a major of 128 up. */
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
        static const char *const exts[8] = { "XKEYBOARD", "RENDER", "BIG-REQUESTS", "SHAPE",
                                             "XFIXES", "RANDR", "XInputExtension", "SYNC" };
        struct msg_class cls = { .major = major, .query_ext = -1 };
        if (major == 98 && len > 0)
            cls.query_ext = (int16_t)(msg[0] % 16);
        if (major >= 128) {
            cls.ext = exts[(kind >> 3) & 7];
            cls.minor = len > 1 ? msg[1] : 0;
        }
        struct buf out = { 0 };
        switch (kind & 7) {
        case 0:                         /* a request crossing to the server */
            cls.kind = MSG_REQUEST;
            predict_ask(&pq, &cls, msg, (uint32_t)len, ++seq, msb);
            predict_track(p, &pq, &cls, msg, (uint32_t)len, msb);
            break;
        case 1:                         /* a reply to the latest request */
            cls.kind = MSG_REPLY;
            predict_learn(p, &pq, &cls, seq, msg, (uint32_t)len, msb);
            break;
        case 2:                         /* the display side's check of its own colour request */
            if (len >= 4)
                predict_color_check(p, msg, (uint32_t)(len / 2), msg + len / 2, (uint32_t)(len - len / 2));
            break;
        case 3:                         /* a FACT frame's payload */
            predict_on_fact(p, msg, len);
            break;
        case 4:                         /* the connection's setup reply */
            predict_learn_connection(&pq, msg, len, msb);
            predict_learn_setup(p, msg, len, msb);
            break;
        case 5:                         /* a request that may be quiet */
            cls.kind = MSG_REQUEST;
            predict_quiet(p, &pq, &cls, msg, (uint32_t)len, msb);
            break;
        default:                        /* a request answered here, if it can be */
            cls.kind = MSG_REQUEST;
            if (predict_answer(p, &pq, &cls, msg, (uint32_t)len, (uint16_t)seq, msb, &out) &&
                (out.len < 32 || out.len % 4))
                __builtin_trap(); /* an answer is a whole X reply */
        }
        buf_free(&out);
    }
    predict_questions_free(&pq);
    predict_free(p);
    return 0;
}
