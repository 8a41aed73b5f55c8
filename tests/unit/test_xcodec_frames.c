/* test_xcodec_frames.c -- 32-bit images against an earlier one of their size (a
 * spinner's frames, filter byte 13) and grey images (red and blue as differences from
 * green): the cursor themes' and toolkits' small animated images. */
#include "xcodec_helpers.h"

/* Frame k of a spinner (an animated cursor's): 24 x 24 pixels, a ring of 12 sectors, two of
 * them bright, turning a sector a frame; the rest transparent. Or (k < 0) a gradient. */
static void spinner_frame(struct msgs *m, bool msb, int k)
{
    uint8_t t[20 + 24 * 24 * 4] = { 0 };
    st16(t + 8, 24, msb); st16(t + 10, 24, msb); t[17] = 32;
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 24; x++) {
            double dx = x - 11.5, dy = y - 11.5, r = sqrt(dx * dx + dy * dy);
            int sector = (int)((atan2(dy, dx) + M_PI) / (2 * M_PI) * 12) % 12;
            uint32_t v = 0;
            if (k < 0)
                v = 0xff000000u | (uint32_t)(x * 9 - k * 40) << 16 | (uint32_t)(y * 7) << 8 | (uint32_t)(x + y);
            else if (r >= 6 && r <= 11) {
                uint32_t a = ((sector - k) % 12 + 12) % 12 < 2 ? 0xff : 0x60, g = (uint32_t)(40 + 9 * r);
                v = a << 24 | (g * a / 255) << 16 | (g * a / 255) << 8 | (a / 2);
            }
            st32(t + 20 + 4 * (y * 24 + x), v, msb);
        }
    req(m, msb, 72, 2, sizeof t + 4, t);
}

static void test_frames(void)
{
    TEST("That the frames of an animated cursor cost their changes against the frame before (filter 13)") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs apart = { 0 }, together = { 0 };
            for (int k = 0; k < 12; k++) { /* each frame after a gradient of its size ... */
                spinner_frame(&apart, msb, k);
                spinner_frame(&apart, msb, -1 - k);
            }
            for (int k = 0; k < 12; k++) /* ... or after the frame before it */
                spinner_frame(&together, msb, k);
            for (int k = 0; k < 12; k++)
                spinner_frame(&together, msb, -1 - k);
            size_t a = encoded_size(XC_REQUESTS, msb, &apart), t = encoded_size(XC_REQUESTS, msb, &together);
            CHECK(a != (size_t)-1 && t != (size_t)-1 && t * 10 < a * 8);
            CHECK(round_trip(XC_REQUESTS, msb, &together, 1, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &together, 97, NULL));
            printf("  12 spinner frames and 12 gradients (%s): %zu bytes in turn, %zu frames together\n",
                   msb ? "MSB" : "LSB", a, t);
            buf_free(&apart.all);
            buf_free(&together.all);
        }
    }
}

/* A 24 x 24 image of 32-bit pixels: a disc of a radial shading, grey (red = green = blue,
 * as Adwaita's cursors) or in saturated colours (flat red and orange, as xterm's icon). */
static void shaded_disc(struct msgs *m, bool msb, bool grey, unsigned turn)
{
    uint8_t t[20 + 24 * 24 * 4] = { 0 };
    st16(t + 8, 24, msb); st16(t + 10, 24, msb); t[17] = 32;
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 24; x++) {
            double dx = x - 11.5, dy = y - 11.5, r = sqrt(dx * dx + dy * dy);
            double a = fmod(atan2(dy, dx) + M_PI + turn * 0.3, 2 * M_PI);
            uint32_t v = 0, g = (uint32_t)(a / (2 * M_PI) * 255);
            if (r <= 10)
                v = grey ? 0xff000000u | g << 16 | g << 8 | g
                         : ((x + y) / 6 + turn) % 2 ? 0xffff0000u | (g & 0x80) << 8 : 0xffff5c00u;
            st32(t + 20 + 4 * (y * 24 + x), v, msb);
        }
    req(m, msb, 72, 2, sizeof t + 4, t);
}

static void test_grey(void)
{
    TEST("That grey images send red and blue as their differences from green, colourful ones as they are") {
        for (int msb = 0; msb < 2; msb++) {
            struct msgs grey = { 0 }, colour = { 0 };
            for (unsigned k = 0; k < 8; k++) {
                shaded_disc(&grey, msb, true, 3 * k);      /* turned far: no frame's pixels the one before's */
                shaded_disc(&colour, msb, false, 3 * k);
            }
            size_t g = encoded_size(XC_REQUESTS, msb, &grey), c = encoded_size(XC_REQUESTS, msb, &colour);
            CHECK(round_trip(XC_REQUESTS, msb, &grey, 1, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &grey, 61, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &colour, 1, NULL));
            CHECK(round_trip(XC_REQUESTS, msb, &colour, 61, NULL));
            /* grey: the difference planes are zeros, a quiet bit a sample; three channels
             * of the same values cost more (measured: 2,935 bytes as channels, 1,640 as
             * differences) */
            CHECK(g != (size_t)-1 && g < 2200);
            printf("  8 grey discs (%s): %zu bytes; 8 in saturated colours: %zu\n", msb ? "MSB" : "LSB", g, c);
            buf_free(&grey.all);
            buf_free(&colour.all);
        }
    }
}

int main(void)
{
    test_frames();
    test_grey();
    return test_summary();
}
