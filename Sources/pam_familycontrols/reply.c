/*
 * The Guard's reply to the PAM session module, read as JSON at its top
 * level (pam_familycontrols_reply_status, declared in pam_familycontrols.h).
 */
#include "pam_familycontrols.h"
#include "familycontrols_guard_interface.h"

#include <ctype.h>
#include <string.h>

/* JSON, as far as reading a reply needs: whitespace, a string (its bytes,
 * escapes kept as written), and any value skipped whole. Each returns the
 * position after what it read, or NULL when the text is not JSON. */
static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static const char *read_string(const char *p, const char *end, char *out, size_t capacity) {
    size_t count = 0;
    if (p >= end || *p != '"') return NULL;
    for (p++; p < end; p++) {
        if (*p == '"') {
            if (out && capacity) out[count] = '\0';
            return p + 1;
        }
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            if (p + 1 >= end) return NULL;
            if (out && count + 1 < capacity) out[count++] = *p;
            p++;
        }
        if (out && count + 1 < capacity) out[count++] = *p;
    }
    return NULL;
}

#define JSON_DEPTH_LIMIT 32

static const char *skip_value(const char *p, const char *end, int depth) {
    p = skip_space(p, end);
    if (p >= end || depth > JSON_DEPTH_LIMIT) return NULL;
    if (*p == '"') return read_string(p, end, NULL, 0);
    if (*p == '{' || *p == '[') {
        const int object = *p == '{';
        const char close = object ? '}' : ']';
        p = skip_space(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (object) {
                p = read_string(skip_space(p, end), end, NULL, 0);
                if (!p) return NULL;
                p = skip_space(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            p = skip_value(p, end, depth + 1);
            if (!p) return NULL;
            p = skip_space(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            return p < end && *p == close ? p + 1 : NULL;
        }
    }
    /* A number, true, false or null. */
    const char *start = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.')) p++;
    return p > start ? p : NULL;
}

int pam_familycontrols_reply_status(const char *reply, size_t length, char *error, size_t capacity) {
    const char *end = reply + length;
    if (error && capacity) error[0] = '\0';
    const char *p = skip_space(reply, end);
    if (p >= end || *p != '{') return -1;
    p = skip_space(p + 1, end);
    int status = 0;
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            char key[16];
            p = read_string(skip_space(p, end), end, key, sizeof key);
            if (!p) return -1;
            p = skip_space(p, end);
            if (p >= end || *p != ':') return -1;
            p = skip_space(p + 1, end);
            if (strcmp(key, FAMILYCONTROLS_REPLY_ERROR) == 0) {
                /* The error's name: a string, as the protocol has it. */
                p = read_string(p, end, error, capacity);
                status = 1;
            } else {
                p = skip_value(p, end, 0);
            }
            if (!p) return -1;
            p = skip_space(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return -1;
        }
    }
    return skip_space(p, end) == end ? status : -1;
}
