#pragma once
// The Lua scripts of the tracked reservation layout (redis_transport.hpp, "Reservation
// tracking") and of this SDK's delayed publish in that layout ("Delayed publish"). They run
// atomically on the server; every key they touch is passed in KEYS, so on a Redis Cluster
// they work whenever the queue name is hash-tagged (`{orders}`).
//
// Deadline members are `<token>:<stored value>` with a 32-hex token (the Python SDK ≥ 1.24
// layout, whose sweep accepts any member with ':' at byte 33). Tokens this SDK writes are
// `<16 hex: reservation time in ms><"cc"><14 hex random>`; recover() reads the time back
// from them (a foreign token's age is derived from its deadline score instead).
//
// Scheduled members (`<queue>:scheduled`, this SDK's own set: no peer writes it) are
// `<16 hex: publish time in µs, server clock><16 hex random>:<stored value>`, score = the due
// time in epoch milliseconds (server clock). The prefix makes two identical values two
// members, and sorts members of one score in publish order; the move strips it (33 bytes), so
// the ready list gets exactly the value publish() would have pushed.

namespace babelqueue::inline v1::redis::detail {

// Shared by the scripts that move due scheduled members (prepended to their text; Lua 5.1
// has no modules and a script cannot call another one).
//   bq_migrate(ready, scheduled, batch, now_ms): moves up to `batch` (-1 = all) members due at
//   `now_ms` to the END of `ready`, prefix stripped, in score order then publish order.
//   bq_next_due(scheduled, now_ms): ms until the earliest member is due (capped at an hour),
//   -1 when there is none.
inline constexpr const char* scheduled_lua_lib = R"lua(
local function bq_migrate(ready, scheduled, batch, now_ms)
  local due = redis.call('zrangebyscore', scheduled, '-inf', string.format('%d', now_ms),
                         'limit', 0, batch)
  if #due == 0 then
    return
  end
  redis.call('zremrangebyrank', scheduled, 0, #due - 1)
  for i = 1, #due, 100 do
    local values = {}
    for j = i, math.min(i + 99, #due) do
      values[#values + 1] = string.sub(due[j], 34)
    end
    redis.call('rpush', ready, unpack(values))
  end
end
local function bq_next_due(scheduled, now_ms)
  local head = redis.call('zrange', scheduled, 0, 0, 'WITHSCORES')
  if #head < 2 then
    return -1
  end
  return math.floor(math.min(math.max(0, tonumber(head[2]) - now_ms), 3600000))
end
)lua";

// Appended to scheduled_lua_lib (transport_scripts()).
// KEYS: ready, processing, deadlines, scheduled.
// ARGV[1] retry_after seconds (-1 = +inf), ARGV[2] 12 hex random, ARGV[3] how many messages
// to reserve after settling (0 = settle only, at most 255), ARGV[4] migration batch (-1 =
// all), ARGV[5..] pairs (token, stored value) of deferred acks. Settles each pair (gated on
// its member); then, when reserving, moves the due scheduled members to ready and moves up to
// ARGV[3] heads of ready to processing, recording one member each. Returns {settled} (settle
// only) or {settled, next due, value1, token1, value2, token2, ...}, where next due is the ms
// until the earliest scheduled member is due when nothing was reserved, else -1.
inline constexpr const char* settle_reserve_body = R"lua(
local settled = 0
local n = #ARGV
local i = 5
while i < n do
  if redis.call('zrem', KEYS[3], ARGV[i] .. ':' .. ARGV[i + 1]) == 1 then
    redis.call('lrem', KEYS[2], 1, ARGV[i + 1])
    settled = settled + 1
  end
  i = i + 2
end
local out = {settled}
local want = tonumber(ARGV[3])
if want < 1 then
  return out
end
local t = redis.call('time')
local sec = tonumber(t[1])
local ms = sec * 1000 + math.floor(tonumber(t[2]) / 1000)
bq_migrate(KEYS[1], KEYS[4], ARGV[4], ms)
out[2] = -1
local ra = tonumber(ARGV[1])
local score = '+inf'
if ra >= 0 then
  score = string.format('%d', sec + ra)
end
local prefix = string.format('%016x', ms) .. 'cc' .. ARGV[2]
for k = 1, want do
  local raw = redis.call('lmove', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not raw then
    break
  end
  local token = prefix .. string.format('%02x', k % 256)
  redis.call('zadd', KEYS[3], score, token .. ':' .. raw)
  out[#out + 1] = raw
  out[#out + 1] = token
end
if #out == 2 then
  out[2] = bq_next_due(KEYS[4], ms)
end
return out
)lua";

// Appended to scheduled_lua_lib. The untracked receive's move (track_reservations=false: its
// reservation is a plain LMOVE/BLMOVE, sent right behind this in the same round trip).
// KEYS: ready, scheduled. ARGV[1] migration batch (-1 = all). Returns the ms until the
// earliest member left is due, -1 when there is none.
inline constexpr const char* migrate_body = R"lua(
local t = redis.call('time')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
bq_migrate(KEYS[1], KEYS[2], ARGV[1], ms)
return bq_next_due(KEYS[2], ms)
)lua";

// KEYS: scheduled. ARGV[1] delay in ms (> 0), ARGV[2] 16 hex random, ARGV[3] the stored value
// (what publish() would push). Adds the member `<16 hex µs><ARGV[2]>:<value>` due at
// ceil(now in ms) + delay (server clock: never early, whatever the client's clock says). NX
// and a bumped stamp on the (astronomically unlikely) equal member: a delayed publish never
// collapses into another one. Returns 1.
inline constexpr const char* schedule_script = R"lua(
local t = redis.call('time')
local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local due = string.format('%.0f', math.ceil(us / 1000) + tonumber(ARGV[1]))
local stamp = us
while redis.call('zadd', KEYS[1], 'NX', due, string.format('%016x', stamp) .. ARGV[2] .. ':' ..
                                              ARGV[3]) == 0 do
  stamp = stamp + 1
end
return 1
)lua";

// KEYS: ready, processing, deadlines. ARGV pairs (token, stored value), newest first.
// Hands prefetched, never-delivered reservations back to the HEAD of ready (gated), so the
// queue's order is as if they had never been taken. Returns how many moved.
inline constexpr const char* unreserve_script = R"lua(
local moved = 0
for i = 1, #ARGV - 1, 2 do
  if redis.call('zrem', KEYS[3], ARGV[i] .. ':' .. ARGV[i + 1]) == 1 then
    redis.call('lrem', KEYS[2], 1, ARGV[i + 1])
    redis.call('lpush', KEYS[1], ARGV[i + 1])
    moved = moved + 1
  end
end
return moved
)lua";

// KEYS: ready, processing, deadlines. ARGV[1] token, ARGV[2] stored value.
// Gated release: only while the reservation's member exists, move the value from processing
// to the END of ready. Returns 1 when it moved, 0 when the reservation was already gone.
inline constexpr const char* release_script = R"lua(
if redis.call('zrem', KEYS[3], ARGV[1] .. ':' .. ARGV[2]) == 1 then
  redis.call('lrem', KEYS[2], 1, ARGV[2])
  redis.call('rpush', KEYS[1], ARGV[2])
  return 1
end
return 0
)lua";

// Untracked release (track_reservations=false): move only when LREM found the value.
// KEYS: ready, processing. ARGV[1] stored value.
inline constexpr const char* release_untracked_script = R"lua(
if redis.call('lrem', KEYS[2], 1, ARGV[1]) == 1 then
  redis.call('rpush', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua";

// KEYS: ready, processing, deadlines.
// ARGV[1] older_than ms, ARGV[2] retry_after seconds for stamped members (-1 = +inf),
// ARGV[3] 10 hex random (stamp tokens), ARGV[4] assumed retry_after seconds of foreign
// (non-C++) members, used to derive their reservation time from their deadline score.
// Returns {moved, stamped, remaining}.
inline constexpr const char* recover_script = R"lua(
local t = redis.call('time')
local sec = tonumber(t[1])
local now = sec * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = now - tonumber(ARGV[1])
local foreign_ra = tonumber(ARGV[4])
local moved = 0
local covered = {}
local members = redis.call('zrange', KEYS[3], 0, -1, 'WITHSCORES')
for i = 1, #members, 2 do
  local m = members[i]
  local score = tonumber(members[i + 1])
  if #m >= 34 and string.byte(m, 33) == 58 then
    local raw = string.sub(m, 34)
    local at = nil
    if string.sub(m, 17, 18) == 'cc' then
      at = tonumber(string.sub(m, 1, 16), 16)
      if at ~= nil and (at > now + 86400000 or at < now - 3153600000000) then at = nil end
    end
    if at == nil and score ~= nil and score < math.huge then
      at = (score - foreign_ra) * 1000
    end
    if at ~= nil and at <= cutoff then
      redis.call('zrem', KEYS[3], m)
      if redis.call('lrem', KEYS[2], 1, raw) == 1 then
        redis.call('rpush', KEYS[1], raw)
        moved = moved + 1
      end
    else
      covered[raw] = (covered[raw] or 0) + 1
    end
  else
    redis.call('zrem', KEYS[3], m)
  end
end
local stamped = 0
local list = redis.call('lrange', KEYS[2], 0, -1)
local ra = tonumber(ARGV[2])
local score = '+inf'
if ra >= 0 then score = string.format('%d', sec + ra) end
for _, v in ipairs(list) do
  local c = covered[v]
  if c ~= nil and c > 0 then
    covered[v] = c - 1
  elseif now <= cutoff then
    redis.call('lrem', KEYS[2], 1, v)
    redis.call('rpush', KEYS[1], v)
    moved = moved + 1
  else
    stamped = stamped + 1
    local token = string.format('%016x', now) .. 'cc' .. ARGV[3] .. string.format('%04x', stamped % 65536)
    redis.call('zadd', KEYS[3], score, token .. ':' .. v)
  end
end
return {moved, stamped, redis.call('llen', KEYS[2])}
)lua";

}  // namespace babelqueue::inline v1::redis::detail
