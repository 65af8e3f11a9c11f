#define _DEFAULT_SOURCE
#include "CPAM.h"

#ifdef __linux__
#include <stdlib.h>
#include <string.h>
#include <shadow.h>
#include <time.h>

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
    /* libpam copies this struct, so a stack value is enough. */
    struct pam_conv conv = { cpam_converse, conversation };
    if (confdir != NULL) {
        return pam_start_confdir(service, user, &conv, confdir, handle);
    }
    return pam_start(service, user, &conv, handle);
}

int cpam_set_string_item(pam_handle_t *handle, int item, const char *value) {
    return pam_set_item(handle, item, value);
}

const char *cpam_get_string_item(pam_handle_t *handle, int item) {
    const void *value = NULL;
    if (pam_get_item(handle, item, &value) != PAM_SUCCESS) {
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
