# Install rules, CMake package config and pkg-config files (owned by the packaging work).
