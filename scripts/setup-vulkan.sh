#!/usr/bin/env bash
# A Vulkan device for the wgpu tests: when `vulkaninfo` finds no Vulkan device, installs Mesa's
# lavapipe (Vulkan 1.3 on the CPU, Debian's mesa-vulkan-drivers) with the Vulkan loader and
# vulkaninfo, then prints the device the tests will run on. Fails when no device comes up: the
# wgpu tests must not be skipped for want of one.
#
# usage: scripts/setup-vulkan.sh
set -euo pipefail

# wgpu and the Vulkan loader warn on every start when XDG_RUNTIME_DIR is unset; harmless.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"

devices() {
    command -v vulkaninfo >/dev/null 2>&1 || return 1
    vulkaninfo --summary 2>/dev/null | grep -E '^\s*deviceName\s*=' | sed 's/^\s*deviceName\s*=\s*//'
}

if [ -z "$(devices || true)" ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup-vulkan: no Vulkan device and no apt-get to install lavapipe with;" \
            "install a Vulkan driver (Mesa's lavapipe: mesa-vulkan-drivers) and vulkan-tools" >&2
        exit 1
    fi
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup-vulkan: no Vulkan device; installing lavapipe (mesa-vulkan-drivers)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        mesa-vulkan-drivers libvulkan1 vulkan-tools >/dev/null
fi

found="$(devices || true)"
if [ -z "$found" ]; then
    echo "setup-vulkan: still no Vulkan device after installing lavapipe; vulkaninfo says:" >&2
    vulkaninfo --summary >&2 || true
    exit 1
fi
echo "setup-vulkan: Vulkan devices:"
echo "$found" | sed 's/^/  /'
