#pragma once
// The Lua scripts of the Laravel-compatible mode (`redis://…?laravel=1`,
// redis_transport.hpp "Laravel-compatible mode"). Their EFFECTS are those of Laravel's own
// queue scripts (Illuminate\Queue\LuaScripts: push, pop, release, migrateExpiredJobs) and of
// the Python SDK's `laravel_compat` mode, so Laravel, Python and C++ workers can share one
// queue; the text is this SDK's own. Differences, each one a hardening that no peer can see:
//   - one script does what Laravel does in three EVALs (migrate :delayed, migrate expired
//     :reserved, pop) plus the deferred acks of the previous message: one round trip;
//   - the clock is the server's (TIME), not each client's, so workers whose clocks disagree
//     still agree on when a reservation expired; scores are whole epoch seconds as Laravel's;
//   - a job that cjson cannot decode, that is not an object, whose `attempts` is not a
//     number, or that cjson cannot re-encode is reserved RAW (member = job) instead of the
//     script raising after its LPOP (which, in Laravel's unguarded script, loses the job);
//   - release is gated: it re-queues only while its reservation still exists, so a late
//     release of a reservation that already expired and migrated back cannot duplicate it.
// Every key is passed in KEYS: on a Redis Cluster the four keys of a queue must share a slot
// (`queues:{orders}`).

namespace babelqueue::inline v1::redis::detail {

// KEYS: ready, reserved, delayed, notify.
// ARGV[1] retry_after seconds (-1 = never: reservations score +inf and are never migrated
// back), ARGV[2] migration batch (-1 = all), ARGV[3] 1 = reserve a job after settling, 0 =
// settle only, ARGV[4..] reserved members of deferred acks (ZREM each).
// Returns {settled} (settle only), {settled, job, reserved member} (a job was reserved) or
// {settled, ms until the next delayed job is due (at most an hour) or -1} (nothing ready).
inline constexpr const char* laravel_reserve_script = R"lua(
local settled = 0
for i = 4, #ARGV do
  settled = settled + redis.call('zrem', KEYS[2], ARGV[i])
end
if tonumber(ARGV[3]) < 1 then
  return {settled}
end
local t = redis.call('time')
local now = tonumber(t[1])
local now_ms = now * 1000 + math.floor(tonumber(t[2]) / 1000)
local function migrate(from)
  local due = redis.call('zrangebyscore', from, '-inf', now, 'limit', 0, ARGV[2])
  if #due == 0 then
    return
  end
  redis.call('zremrangebyrank', from, 0, #due - 1)
  for i = 1, #due, 100 do
    local last = math.min(i + 99, #due)
    redis.call('rpush', KEYS[1], unpack(due, i, last))
    for _ = i, last do
      redis.call('rpush', KEYS[4], 1)
    end
  end
end
local retry_after = tonumber(ARGV[1])
migrate(KEYS[3])
if retry_after >= 0 then
  migrate(KEYS[2])
end
local job = redis.call('lpop', KEYS[1])
if not job then
  local head = redis.call('zrange', KEYS[3], 0, 0, 'WITHSCORES')
  local wait = -1
  if #head == 2 then
    wait = math.floor(math.min(math.max(0, tonumber(head[2]) * 1000 - now_ms), 3600000))
  end
  return {settled, wait}
end
local reserved = job
local ok, decoded = pcall(cjson.decode, job)
if ok and type(decoded) == 'table' and type(decoded['attempts']) == 'number' then
  decoded['attempts'] = decoded['attempts'] + 1
  local encoded_ok, encoded = pcall(cjson.encode, decoded)
  if encoded_ok then
    reserved = encoded
  end
end
local score = '+inf'
if retry_after >= 0 then
  score = string.format('%d', now + retry_after)
end
redis.call('zadd', KEYS[2], score, reserved)
redis.call('lpop', KEYS[4])
return {settled, job, reserved}
)lua";

// KEYS: ready, reserved, delayed, notify. ARGV[1] reserved member, ARGV[2] the job to
// re-queue, ARGV[3] delay in ms (0 = now).
// Gated release: only while the reservation exists, it leaves :reserved and the job goes to
// the END of the ready list (delay 0, with its notify token) or to :delayed, due at
// ceil(now + delay) in whole epoch seconds on the server's clock — never early (Laravel's
// floor(now) + delay can be up to a second early). Returns 1 when it re-queued, 0 when the
// reservation was already gone.
inline constexpr const char* laravel_release_script = R"lua(
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  return 0
end
local delay = tonumber(ARGV[3])
if delay <= 0 then
  redis.call('rpush', KEYS[1], ARGV[2])
  redis.call('rpush', KEYS[4], 1)
else
  local t = redis.call('time')
  local due_ms = tonumber(t[1]) * 1000 + math.ceil(tonumber(t[2]) / 1000) + delay
  redis.call('zadd', KEYS[3], string.format('%.0f', math.ceil(due_ms / 1000)), ARGV[2])
end
return 1
)lua";

// KEYS: delayed. ARGV[1] delay in ms (> 0), ARGV[2] the job, as publish() would push it.
// Laravel's later() (`ZADD :delayed <availableAt> <payload>`, whole epoch seconds; the pop's
// migration moves it to the ready list with its notify token once the score is <= now), with
// the score taken on the server's clock and rounded UP: ceil(now + delay), so the job is
// never due early (Laravel and Python compute floor(now) + delay on their own clocks, which
// can be up to a second early). NX: an identical job already waiting keeps its own due time
// (the set cannot hold the same job twice). Returns ZADD's count (0 = it was there already).
inline constexpr const char* laravel_schedule_script = R"lua(
local t = redis.call('time')
local due_ms = tonumber(t[1]) * 1000 + math.ceil(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
return redis.call('zadd', KEYS[1], 'NX', string.format('%.0f', math.ceil(due_ms / 1000)), ARGV[2])
)lua";

// KEYS: ready, reserved, notify. ARGV[1] older_than milliseconds (0 = every reservation),
// ARGV[2] retry_after seconds the reservations were scored with (-1 = never).
// Moves reservations made more than older_than ago (reservation time = score - retry_after)
// back to the END of the ready list, one notify token each, as the bytes that were reserved
// (Laravel's migration does the same: a recovered reservation counts as an attempt).
// Returns {moved, 0, reservations left}.
inline constexpr const char* laravel_recover_script = R"lua(
local older = tonumber(ARGV[1])
local cutoff = '+inf'
if older > 0 then
  local t = redis.call('time')
  local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  cutoff = string.format('%d', math.floor((now_ms - older) / 1000) + tonumber(ARGV[2]))
end
local old = redis.call('zrangebyscore', KEYS[2], '-inf', cutoff)
for i = 1, #old, 100 do
  local last = math.min(i + 99, #old)
  redis.call('zrem', KEYS[2], unpack(old, i, last))
  redis.call('rpush', KEYS[1], unpack(old, i, last))
  for _ = i, last do
    redis.call('rpush', KEYS[3], 1)
  end
end
return {#old, 0, redis.call('zcard', KEYS[2])}
)lua";

}  // namespace babelqueue::inline v1::redis::detail
