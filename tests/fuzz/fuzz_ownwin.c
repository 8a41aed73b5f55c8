/* fuzz_ownwin.c -- libFuzzer target for the model of a client's own windows (ownwin.c):
 * a stream of records (kind byte, major opcode, 2-byte length, bytes) feeds both sides'
 * models with requests (the display side reads them from the link), the app side with
 * FACT payloads (kinds 10-12, from the link), the display side with the observer's events,
 * and asks for answers, which must be whole replies and the same on both sides. */
#include <stdint.h>
#include <string.h>

#include "proxy/ownwin.h"
#include "proxy/predict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct predictor *atoms;
    if (predict_new(&atoms) < 0)
        return 0;
    struct ownwin_state app, disp;
    ownwin_init(&app, false);
    ownwin_init(&disp, true);
    uint16_t seq = 0;
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
        struct msg_class cls = { .kind = MSG_REQUEST, .major = major, .query_ext = -1 };
        uint32_t a = len >= 4 ? (uint32_t)msg[0] | (uint32_t)msg[1] << 8 | (uint32_t)msg[2] << 16 | (uint32_t)msg[3] << 24 : 0;
        uint32_t b = len >= 8 ? (uint32_t)msg[4] | (uint32_t)msg[5] << 8 | (uint32_t)msg[6] << 16 | (uint32_t)msg[7] << 24 : 0;
        switch (kind & 7) {
        case 0: /* a request of the client, seen by both sides */
            ownwin_may_fail(&app, &cls, msg, (uint32_t)len, msb);
            ownwin_on_request(&app, &cls, msg, (uint32_t)len, msb);
            ownwin_on_request(&disp, &cls, msg, (uint32_t)len, msb);
            seq++;
            break;
        case 1: /* a FACT payload */
            ownwin_on_fact(&app, msg, len);
            ownwin_on_fact(NULL, msg, len);
            break;
        case 2: /* the connection's setup reply */
            ownwin_learn_setup(&app, msg, len, msb);
            ownwin_learn_setup(&disp, msg, len, msb);
            break;
        case 3: { /* an event the observer saw */
            uint32_t atom = b;
            switch (major & 3) {
            case 0: ownwin_event_property(&disp, a, &atom); break;
            case 1: ownwin_event_configure(&disp, a); break;
            case 2: ownwin_event_map(&disp, a); break;
            default: ownwin_event_foreign(&disp, a, (uint8_t)b); break;
            }
            ownwin_geometry_differs(&disp, a, 0, 0, 1, 1, 0);
            break;
        }
        default: { /* a question answered at the app side, and checked at the display side */
            struct buf out = { 0 }, check = { 0 };
            seq++;
            bool answered = ownwin_answer(&app, atoms, &cls, msg, (uint32_t)len, seq, msb, false, &out);
            bool known = ownwin_answer(&disp, atoms, &cls, msg, (uint32_t)len, seq, msb, true, &check);
            if (answered && (out.len < 32 || out.len % 4 || !known))
                __builtin_trap(); /* an answer is a whole reply the display side can check */
            ownwin_on_request(&app, &cls, msg, (uint32_t)len, msb);
            ownwin_on_request(&disp, &cls, msg, (uint32_t)len, msb);
            buf_free(&out);
            buf_free(&check);
        }
        }
    }
    ownwin_free(&app);
    ownwin_free(&disp);
    predict_free(atoms);
    return 0;
}
