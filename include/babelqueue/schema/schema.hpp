#pragma once
/// @file schema/schema.hpp
/// @brief Umbrella header of babelqueue::schema (per-URN `data` validation and registry tools).
/// The consumer-side wrap lives in schema/wrap.hpp (it needs the runtime's app.hpp).

#include <babelqueue/schema/asyncapi.hpp>
#include <babelqueue/schema/compat.hpp>
#include <babelqueue/schema/conformance.hpp>
#include <babelqueue/schema/document.hpp>
#include <babelqueue/schema/guard.hpp>
#include <babelqueue/schema/provider.hpp>
#include <babelqueue/schema/registry.hpp>
#include <babelqueue/schema/tooling.hpp>
