# Install locations of the package files, relative to the prefix. Separate from
# BabelqueueInstall.cmake because tests/install/ needs them on the first configure, before
# the top-level CMakeLists.txt includes BabelqueueInstall.cmake (which comes last).
include_guard(GLOBAL)
include(GNUInstallDirs)

set(BABELQUEUE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/babelqueue"
    CACHE STRING "Where babelqueue-config.cmake is installed (relative to the prefix)")
set(BABELQUEUE_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where babelqueue-<component>.pc files are installed (relative to the prefix)")
mark_as_advanced(BABELQUEUE_INSTALL_CMAKEDIR BABELQUEUE_INSTALL_PKGCONFIGDIR)
