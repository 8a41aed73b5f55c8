/* log.c -- writes log lines to stderr. Its two settings are the only process-wide
 * state outside main.c: set once at start-up, read everywhere. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static struct {
    enum log_level level;
    const char *prefix;
} log_cfg = { LOG_INFO, NULL };

void log_setup(enum log_level level, const char *prefix)
{
    log_cfg.level = level;
    if (prefix)
        log_cfg.prefix = prefix;
}

enum log_level log_get_level(void) { return log_cfg.level; }

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *const names[] = { "error", "warning", "info", "debug" };
    if (level > log_cfg.level)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* Debug lines carry the time of day to the millisecond, so that the logs of both halves
     * (and of the link emulator) merge into one timeline of where a slow start's time went. */
    char stamp[32] = "";
    if (level == LOG_DEBUG) {
        struct timespec now;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &now);
        localtime_r(&now.tv_sec, &tm);
        snprintf(stamp, sizeof stamp, "%02d:%02d:%02d.%03ld: ", tm.tm_hour, tm.tm_min, tm.tm_sec,
                 now.tv_nsec / 1000000L);
    }
    if (log_cfg.prefix)
        fprintf(stderr, "tincan %s: %s: %s%s\n", log_cfg.prefix, names[level], stamp, line);
    else
        fprintf(stderr, "tincan: %s: %s%s\n", names[level], stamp, line);
}
