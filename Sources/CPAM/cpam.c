#define _GNU_SOURCE
#include "CPAM.h"

#ifdef __linux__
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <shadow.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* libpam's calls, looked up once. Each pointer has the type the header
   declares, so the compiler checks every call made through it. */
static struct {
    __typeof__(&pam_start) start;
    __typeof__(&pam_start_confdir) start_confdir;
    __typeof__(&pam_end) end;
    __typeof__(&pam_authenticate) authenticate;
    __typeof__(&pam_acct_mgmt) acct_mgmt;
    __typeof__(&pam_set_item) set_item;
    __typeof__(&pam_get_item) get_item;
    __typeof__(&pam_strerror) strerror;
    /* Empty once loaded; why not, otherwise. */
    char problem[256];
    /* Set once everything above is; read without taking the once. */
    _Atomic int loaded;
} libpam;
static pthread_once_t libpam_once = PTHREAD_ONCE_INIT;

static void *libpam_symbol(void *library, const char *name) {
    void *symbol = dlsym(library, name);
    if (symbol == NULL && libpam.problem[0] == '\0') {
        snprintf(libpam.problem, sizeof(libpam.problem), "libpam.so.0 has no %s", name);
    }
    return symbol;
}

static void libpam_load(void) {
    /* By its soname, as the loader would find it at start; never unloaded. */
    void *library = dlopen("libpam.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(libpam.problem, sizeof(libpam.problem), "%s", reason != NULL ? reason : "libpam.so.0 cannot be loaded");
        return;
    }
    libpam.start = (__typeof__(libpam.start))libpam_symbol(library, "pam_start");
    libpam.start_confdir = (__typeof__(libpam.start_confdir))libpam_symbol(library, "pam_start_confdir");
    libpam.end = (__typeof__(libpam.end))libpam_symbol(library, "pam_end");
    libpam.authenticate = (__typeof__(libpam.authenticate))libpam_symbol(library, "pam_authenticate");
    libpam.acct_mgmt = (__typeof__(libpam.acct_mgmt))libpam_symbol(library, "pam_acct_mgmt");
    libpam.set_item = (__typeof__(libpam.set_item))libpam_symbol(library, "pam_set_item");
    libpam.get_item = (__typeof__(libpam.get_item))libpam_symbol(library, "pam_get_item");
    libpam.strerror = (__typeof__(libpam.strerror))libpam_symbol(library, "pam_strerror");
    if (libpam.problem[0] == '\0') {
        libpam.loaded = 1;
    }
}

const char *cpam_unavailable(void) {
    pthread_once(&libpam_once, libpam_load);
    return libpam.problem[0] == '\0' ? NULL : libpam.problem;
}

void cpam_zero(void *pointer, size_t length) {
    if (pointer != NULL && length > 0) {
        explicit_bzero(pointer, length);
    }
}

static void free_responses(struct pam_response *responses, int count) {
    if (responses == NULL) {
        return;
    }
    for (int i = 0; i < count; i++) {
        if (responses[i].resp != NULL) {
            cpam_zero(responses[i].resp, strlen(responses[i].resp));
            free(responses[i].resp);
        }
    }
    free(responses);
}

int cpam_converse(int num_msg, const struct pam_message **msg,
                  struct pam_response **resp, void *appdata_ptr) {
    if (resp == NULL) {
        return PAM_CONV_ERR;
    }
    *resp = NULL;
    cpam_conversation *conversation = appdata_ptr;
    if (conversation == NULL || conversation->reply == NULL || msg == NULL) {
        return PAM_CONV_ERR;
    }
    if (num_msg <= 0 || num_msg > CPAM_MAX_MESSAGES) {
        return PAM_CONV_ERR;
    }

    struct pam_response *responses = calloc((size_t)num_msg, sizeof(*responses));
    if (responses == NULL) {
        return PAM_BUF_ERR;
    }

    for (int i = 0; i < num_msg; i++) {
        const struct pam_message *message = msg[i];
        if (message == NULL) {
            free_responses(responses, i);
            return PAM_CONV_ERR;
        }
        const char *text = message->msg != NULL ? message->msg : "";
        switch (message->msg_style) {
        case PAM_PROMPT_ECHO_OFF:
        case PAM_PROMPT_ECHO_ON: {
            char *reply = malloc(CPAM_MAX_REPLY_SIZE);
            if (reply == NULL) {
                free_responses(responses, i);
                return PAM_BUF_ERR;
            }
            size_t length = 0;
            int status = conversation->reply(conversation->context, message->msg_style, text,
                                             reply, CPAM_MAX_REPLY_SIZE, &length);
            if (status != 0 || length >= CPAM_MAX_REPLY_SIZE || memchr(reply, '\0', length) != NULL) {
                cpam_zero(reply, CPAM_MAX_REPLY_SIZE);
                free(reply);
                free_responses(responses, i);
                return PAM_CONV_ERR;
            }
            reply[length] = '\0';
            responses[i].resp = reply;
            break;
        }
        case PAM_ERROR_MSG:
        case PAM_TEXT_INFO: {
            size_t unused = 0;
            if (conversation->reply(conversation->context, message->msg_style, text,
                                    NULL, 0, &unused) != 0) {
                free_responses(responses, i);
                return PAM_CONV_ERR;
            }
            break;
        }
        default:
            /* Binary prompts and unknown styles are not relayed. */
            free_responses(responses, i);
            return PAM_CONV_ERR;
        }
    }
    *resp = responses;
    return PAM_SUCCESS;
}

int cpam_start(const char *service, const char *user, const char *confdir,
               cpam_conversation *conversation, pam_handle_t **handle) {
    if (cpam_unavailable() != NULL) {
        return PAM_SYSTEM_ERR;
    }
    /* libpam copies this struct, so a stack value is enough. */
    struct pam_conv conv = { cpam_converse, conversation };
    if (confdir != NULL) {
        return libpam.start_confdir(service, user, &conv, confdir, handle);
    }
    return libpam.start(service, user, &conv, handle);
}

int cpam_authenticate(pam_handle_t *handle, int flags) {
    return libpam.authenticate(handle, flags);
}

int cpam_acct_mgmt(pam_handle_t *handle, int flags) {
    return libpam.acct_mgmt(handle, flags);
}

int cpam_end(pam_handle_t *handle, int status) {
    return libpam.end(handle, status);
}

int cpam_module_log_begin(int *saved_stderr) {
    int ends[2];
    /* Descriptor 2 must be open, so neither end of the pipe can take its place. */
    if (saved_stderr == NULL || fcntl(STDERR_FILENO, F_GETFD) < 0 || pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
        return -1;
    }
    if (ends[0] <= STDERR_FILENO || ends[1] <= STDERR_FILENO) {
        close(ends[0]);
        close(ends[1]);
        return -1;
    }
    int saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (saved < 0 || dup2(ends[1], STDERR_FILENO) < 0) {
        if (saved >= 0) {
            close(saved);
        }
        close(ends[0]);
        close(ends[1]);
        return -1;
    }
    close(ends[1]);
    /* Every syslog line of this process now also goes to descriptor 2
       (the options csystem_open_log sets, and LOG_PERROR). */
    openlog(NULL, LOG_PID | LOG_PERROR, LOG_USER);
    *saved_stderr = saved;
    return ends[0];
}

size_t cpam_module_log_end(int reader, int saved_stderr, char *buffer, size_t capacity) {
    openlog(NULL, LOG_PID, LOG_USER);
    while (dup2(saved_stderr, STDERR_FILENO) < 0 && errno == EINTR) {
    }
    close(saved_stderr);
    /* The pipe's only writer is closed: read to its end or to capacity. */
    size_t length = 0;
    while (buffer != NULL && length < capacity) {
        ssize_t count = read(reader, buffer + length, capacity - length);
        if (count > 0) {
            length += (size_t)count;
        } else if (count < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    close(reader);
    return length;
}

const char *cpam_strerror(int code) {
    return libpam.loaded ? libpam.strerror(NULL, code) : NULL;
}

int cpam_set_string_item(pam_handle_t *handle, int item, const char *value) {
    return libpam.set_item(handle, item, value);
}

const char *cpam_get_string_item(pam_handle_t *handle, int item) {
    const void *value = NULL;
    if (libpam.get_item(handle, item, &value) != PAM_SUCCESS) {
        return NULL;
    }
    return value;
}

cpam_password_state cpam_shadow_password_state(const char *user) {
    struct spwd entry;
    struct spwd *found = NULL;
    char buffer[4096];
    cpam_password_state state = CPAM_PASSWORD_UNKNOWN;
    if (user != NULL && getspnam_r(user, &entry, buffer, sizeof(buffer), &found) == 0
        && found != NULL && found->sp_pwdp != NULL) {
        const char *hash = found->sp_pwdp;
        long today = (long)(time(NULL) / (60 * 60 * 24));
        size_t length = strlen(hash);
        if (found->sp_expire != -1 && today >= found->sp_expire) {
            state = CPAM_ACCOUNT_EXPIRED;
        } else if (length == 0 || hash[0] == '*') {
            state = CPAM_PASSWORD_NONE;
        } else if (hash[0] == '!') {
            state = (length > 2 && hash[1] != '*') ? CPAM_PASSWORD_LOCKED : CPAM_PASSWORD_NONE;
        } else {
            state = CPAM_PASSWORD_USABLE;
        }
    }
    cpam_zero(buffer, sizeof(buffer));
    return state;
}
#endif /* __linux__ */
