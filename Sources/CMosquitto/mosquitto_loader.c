// libmosquitto, loaded when the first MQTT client is made (dlopen), as libgps is
// (CFencepostLinux/libgps_loader.c). The API is declared here, from mosquitto.h of 2.0 (its ABI,
// soname libmosquitto.so.1, is stable across 2.0.x), so no build needs the library or its header.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "CMosquitto.h"

#define CMQ_SONAME "libmosquitto.so.1"

// From mosquitto.h / mqtt_protocol.h (2.0).
typedef struct mqtt5__property mosquitto_property;
struct mosquitto_message {
    int mid;
    char *topic;
    void *payload;
    int payloadlen;
    int qos;
    bool retain;
};
enum {
    MOSQ_OPT_PROTOCOL_VERSION = 1,
    MOSQ_OPT_RECEIVE_MAXIMUM = 4,
    MOSQ_OPT_SEND_MAXIMUM = 5,
    MQTT_PROTOCOL_V5 = 5,
    MQTT_PROP_MESSAGE_EXPIRY_INTERVAL = 2,
    MQTT_PROP_SESSION_EXPIRY_INTERVAL = 17,
    MQTT_PROP_WILL_DELAY_INTERVAL = 24,
};

static struct {
    int (*lib_init)(void);
    int (*lib_version)(int *, int *, int *);
    struct mosquitto *(*new_)(const char *, bool, void *);
    void (*destroy)(struct mosquitto *);
    int (*int_option)(struct mosquitto *, int, int);
    int (*will_set_v5)(struct mosquitto *, const char *, int, const void *, int, bool, mosquitto_property *);
    int (*username_pw_set)(struct mosquitto *, const char *, const char *);
    int (*tls_set)(struct mosquitto *, const char *, const char *, const char *, const char *, int (*)(char *, int, int, void *));
    int (*tls_opts_set)(struct mosquitto *, int, const char *, const char *);
    int (*connect_bind_v5)(struct mosquitto *, const char *, int, int, const char *, const mosquitto_property *);
    int (*connect_bind_async)(struct mosquitto *, const char *, int, int, const char *);
    int (*disconnect_v5)(struct mosquitto *, int, const mosquitto_property *);
    int (*publish_v5)(struct mosquitto *, int *, const char *, int, const void *, int, bool, const mosquitto_property *);
    int (*subscribe_v5)(struct mosquitto *, int *, const char *, int, int, const mosquitto_property *);
    int (*unsubscribe)(struct mosquitto *, int *, const char *);
    int (*loop_read)(struct mosquitto *, int);
    int (*loop_write)(struct mosquitto *, int);
    int (*loop_misc)(struct mosquitto *);
    int (*socket)(struct mosquitto *);
    bool (*want_write)(struct mosquitto *);
    const char *(*strerror_)(int);
    const char *(*reason_string)(int);
    int (*property_add_int32)(mosquitto_property **, int, uint32_t);
    void (*property_free_all)(mosquitto_property **);
    const mosquitto_property *(*property_read_int32)(const mosquitto_property *, int, uint32_t *, bool);
    void (*connect_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const mosquitto_property *));
    void (*disconnect_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, const mosquitto_property *));
    void (*publish_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const mosquitto_property *));
    void (*message_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *));
    void (*subscribe_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const int *, const mosquitto_property *));
    void (*log_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, const char *));
} api;

static void *handle;
static int version;
static cmq_handler handler;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

const char *cmq_soname(void) {
    const char *override = getenv("FENCEPOST_LIBMOSQUITTO");
    return override && *override ? override : CMQ_SONAME;
}

#define CMQ_SYMBOL(field, name) \
    if (!(*(void **)&api.field = dlsym(h, name))) { missing = name; goto fail; }

const char *cmq_load(void) {
    static char why[160];
    const char *missing = NULL;
    pthread_mutex_lock(&load_lock);
    if (handle) { pthread_mutex_unlock(&load_lock); return NULL; }
    void *h = dlopen(cmq_soname(), RTLD_NOW | RTLD_LOCAL);
    if (!h) { const char *e = dlerror(); pthread_mutex_unlock(&load_lock); return e ? e : "dlopen failed"; }
    CMQ_SYMBOL(lib_init, "mosquitto_lib_init")
    CMQ_SYMBOL(lib_version, "mosquitto_lib_version")
    CMQ_SYMBOL(new_, "mosquitto_new")
    CMQ_SYMBOL(destroy, "mosquitto_destroy")
    CMQ_SYMBOL(int_option, "mosquitto_int_option")
    CMQ_SYMBOL(will_set_v5, "mosquitto_will_set_v5")
    CMQ_SYMBOL(username_pw_set, "mosquitto_username_pw_set")
    CMQ_SYMBOL(tls_set, "mosquitto_tls_set")
    CMQ_SYMBOL(tls_opts_set, "mosquitto_tls_opts_set")
    CMQ_SYMBOL(connect_bind_v5, "mosquitto_connect_bind_v5")
    CMQ_SYMBOL(connect_bind_async, "mosquitto_connect_bind_async")
    CMQ_SYMBOL(disconnect_v5, "mosquitto_disconnect_v5")
    CMQ_SYMBOL(publish_v5, "mosquitto_publish_v5")
    CMQ_SYMBOL(subscribe_v5, "mosquitto_subscribe_v5")
    CMQ_SYMBOL(unsubscribe, "mosquitto_unsubscribe")
    CMQ_SYMBOL(loop_read, "mosquitto_loop_read")
    CMQ_SYMBOL(loop_write, "mosquitto_loop_write")
    CMQ_SYMBOL(loop_misc, "mosquitto_loop_misc")
    CMQ_SYMBOL(socket, "mosquitto_socket")
    CMQ_SYMBOL(want_write, "mosquitto_want_write")
    CMQ_SYMBOL(strerror_, "mosquitto_strerror")
    CMQ_SYMBOL(reason_string, "mosquitto_reason_string")
    CMQ_SYMBOL(property_add_int32, "mosquitto_property_add_int32")
    CMQ_SYMBOL(property_free_all, "mosquitto_property_free_all")
    CMQ_SYMBOL(property_read_int32, "mosquitto_property_read_int32")
    CMQ_SYMBOL(connect_v5_callback_set, "mosquitto_connect_v5_callback_set")
    CMQ_SYMBOL(disconnect_v5_callback_set, "mosquitto_disconnect_v5_callback_set")
    CMQ_SYMBOL(publish_v5_callback_set, "mosquitto_publish_v5_callback_set")
    CMQ_SYMBOL(message_v5_callback_set, "mosquitto_message_v5_callback_set")
    CMQ_SYMBOL(subscribe_v5_callback_set, "mosquitto_subscribe_v5_callback_set")
    CMQ_SYMBOL(log_callback_set, "mosquitto_log_callback_set")
    int major = 0, minor = 0, revision = 0;
    api.lib_version(&major, &minor, &revision);
    if (major != 2) {
        dlclose(h);
        pthread_mutex_unlock(&load_lock);
        return "the library is not libmosquitto 2.x (this client uses its MQTT 5 API)";
    }
    api.lib_init();
    version = major * 1000000 + minor * 1000 + revision;
    handle = h;
    pthread_mutex_unlock(&load_lock);
    return NULL;
fail:
    dlclose(h);
    pthread_mutex_unlock(&load_lock);
    snprintf(why, sizeof why, "the library has no %s", missing);
    return why;
}

int cmq_version(void) { return version; }
void cmq_set_handler(cmq_handler h) { handler = h; }

static void emit(void *obj, cmq_event *event) { if (handler) handler(obj, event); }

static void on_connect(struct mosquitto *m, void *obj, int rc, int flags, const mosquitto_property *props) {
    (void)m; (void)props;
    cmq_event e = {0};
    e.kind = CMQ_CONNECT; e.code = rc; e.flags = flags;
    emit(obj, &e);
}

static void on_disconnect(struct mosquitto *m, void *obj, int rc, const mosquitto_property *props) {
    (void)m; (void)props;
    cmq_event e = {0};
    e.kind = CMQ_DISCONNECT; e.code = rc;
    emit(obj, &e);
}

static void on_publish(struct mosquitto *m, void *obj, int mid, int reason, const mosquitto_property *props) {
    (void)m; (void)props;
    cmq_event e = {0};
    e.kind = CMQ_PUBLISH; e.mid = mid; e.code = reason;
    emit(obj, &e);
}

static void on_message(struct mosquitto *m, void *obj, const struct mosquitto_message *msg, const mosquitto_property *props) {
    (void)m;
    cmq_event e = {0};
    e.kind = CMQ_MESSAGE; e.mid = msg->mid; e.topic = msg->topic; e.payload = msg->payload;
    e.payload_length = msg->payloadlen; e.qos = msg->qos; e.retain = msg->retain;
    uint32_t expiry = 0;
    if (props && api.property_read_int32(props, MQTT_PROP_MESSAGE_EXPIRY_INTERVAL, &expiry, false)) {
        e.has_expiry = true; e.expiry = expiry;
    }
    emit(obj, &e);
}

static void on_subscribe(struct mosquitto *m, void *obj, int mid, int count, const int *granted, const mosquitto_property *props) {
    (void)m; (void)props;
    cmq_event e = {0};
    e.kind = CMQ_SUBSCRIBE; e.mid = mid; e.granted = granted; e.granted_count = count;
    emit(obj, &e);
}

static void on_log(struct mosquitto *m, void *obj, int level, const char *text) {
    (void)m;
    cmq_event e = {0};
    e.kind = CMQ_LOG; e.level = level; e.text = text;
    emit(obj, &e);
}

struct mosquitto *cmq_new(const char *id, bool clean_start, void *obj, int send_maximum, int receive_maximum) {
    if (!handle) { errno = ENOSYS; return NULL; }
    struct mosquitto *m = api.new_(id, clean_start, obj);
    if (!m) return NULL;
    if (api.int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        || (send_maximum > 0 && api.int_option(m, MOSQ_OPT_SEND_MAXIMUM, send_maximum))
        || (receive_maximum > 0 && api.int_option(m, MOSQ_OPT_RECEIVE_MAXIMUM, receive_maximum))) {
        api.destroy(m);
        errno = EINVAL;
        return NULL;
    }
    api.connect_v5_callback_set(m, on_connect);
    api.disconnect_v5_callback_set(m, on_disconnect);
    api.publish_v5_callback_set(m, on_publish);
    api.message_v5_callback_set(m, on_message);
    api.subscribe_v5_callback_set(m, on_subscribe);
    api.log_callback_set(m, on_log);
    return m;
}

void cmq_destroy(struct mosquitto *m) { api.destroy(m); }

int cmq_will_set(struct mosquitto *m, const char *topic, int length, const void *payload, int qos, bool retain, uint32_t delay, uint32_t expiry) {
    mosquitto_property *props = NULL;
    int rc = 0;
    if (delay) rc = api.property_add_int32(&props, MQTT_PROP_WILL_DELAY_INTERVAL, delay);
    if (!rc && expiry) rc = api.property_add_int32(&props, MQTT_PROP_MESSAGE_EXPIRY_INTERVAL, expiry);
    if (rc) { api.property_free_all(&props); return rc; }
    // On success the library keeps the properties; on failure they are still ours.
    rc = api.will_set_v5(m, topic, length, payload, qos, retain, props);
    if (rc) api.property_free_all(&props);
    return rc;
}

int cmq_username_pw_set(struct mosquitto *m, const char *username, const char *password) {
    return api.username_pw_set(m, username, password);
}

int cmq_tls_set(struct mosquitto *m, const char *cafile, const char *certfile, const char *keyfile) {
    int rc = api.tls_set(m, cafile, NULL, certfile, keyfile, NULL);
    if (rc) return rc;
    return api.tls_opts_set(m, 1, "tlsv1.2", NULL);
}

int cmq_store_connect_properties(struct mosquitto *m, const char *host, int port, uint32_t session_expiry) {
    mosquitto_property *props = NULL;
    int rc = api.property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL, session_expiry);
    if (rc) return rc;
    rc = api.connect_bind_v5(m, host, port, 1, NULL, props);
    api.property_free_all(&props);
    return rc;
}

int cmq_connect_async(struct mosquitto *m, const char *host, int port, int keepalive) {
    return api.connect_bind_async(m, host, port, keepalive, NULL);
}
int cmq_disconnect(struct mosquitto *m, int reason) { return api.disconnect_v5(m, reason, NULL); }

int cmq_publish(struct mosquitto *m, int *mid, const char *topic, int length, const void *payload, int qos, bool retain, uint32_t expiry) {
    mosquitto_property *props = NULL;
    if (expiry) {
        int rc = api.property_add_int32(&props, MQTT_PROP_MESSAGE_EXPIRY_INTERVAL, expiry);
        if (rc) return rc;
    }
    int rc = api.publish_v5(m, mid, topic, length, payload, qos, retain, props);
    api.property_free_all(&props);
    return rc;
}

int cmq_subscribe(struct mosquitto *m, int *mid, const char *filter, int qos) { return api.subscribe_v5(m, mid, filter, qos, 0, NULL); }
int cmq_unsubscribe(struct mosquitto *m, int *mid, const char *filter) { return api.unsubscribe(m, mid, filter); }
int cmq_loop_read(struct mosquitto *m) { return api.loop_read(m, 1); }
int cmq_loop_write(struct mosquitto *m) { return api.loop_write(m, 1); }
int cmq_loop_misc(struct mosquitto *m) { return api.loop_misc(m); }
int cmq_socket(struct mosquitto *m) { return api.socket(m); }
bool cmq_want_write(struct mosquitto *m) { return api.want_write(m); }
const char *cmq_strerror(int code) { return api.strerror_ ? api.strerror_(code) : "libmosquitto is not loaded"; }
const char *cmq_reason_string(int code) { return api.reason_string ? api.reason_string(code) : "libmosquitto is not loaded"; }
