#pragma once
/// @file babelqueue.hpp
/// @brief Umbrella header of babelqueue::core.

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/text.hpp>
#include <babelqueue/urn.hpp>
#include <babelqueue/uuid.hpp>
#include <babelqueue/version.hpp>
