// libgpiod v1 (Debian 12 / Raspberry Pi OS bookworm ship 1.6.3) for FencepostLinux's GPIO wrappers.
#ifndef FENCEPOST_CGPIOD_SHIM_H
#define FENCEPOST_CGPIOD_SHIM_H
#include <gpiod.h>

// The request flags as plain ints (the enum's values are built from a macro).
static const int fencepost_gpiod_flag_active_low = GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW;
static const int fencepost_gpiod_flag_bias_disable = GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
static const int fencepost_gpiod_flag_bias_pull_down = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN;
static const int fencepost_gpiod_flag_bias_pull_up = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;
#endif
