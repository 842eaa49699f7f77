/**
 * Shared head of every Sluice script: the clock and exact integer division, the Lua twins of
 * `src/algorithms/integer.ts`. ARGV[1] is the caller's clock in ms, or '' for the server's
 * TIME; ARGV[2] the cost; ARGV[3] 1 to apply an admitted request, 0 to only report (peek).
 * Scripts return integers only: Redis truncates Lua floats in replies.
 */
export const PRELUDE = `
local function floor_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then return q - 1 end
  return q
end
local function ceil_div(a, b) return -floor_div(-a, b) end
local now_ms = tonumber(ARGV[1])
if not now_ms then
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local cost = tonumber(ARGV[2])
local commit = ARGV[3] == '1'
-- A key without a TTL was not written by Sluice: drop it and start fresh.
local function fresh_if_unowned(key)
  if redis.call('PTTL', key) == -1 then redis.call('DEL', key) end
end
`;
