-- lib/redis/lua/log_read.lua - one bucket's part of a change log read
-- (rs_log_read): the entries (log_put) at a commit8 in (from8, to8],
-- at most ARGV[3] of them, each followed by a put's value (data_key
-- at its start8; '' for a delete).  ARGV: from8, to8, max.  Returns
-- {0, entry, value, ...}.  KEYS: the bucket's four (common.lua); the
-- change log is KEYS[4], the values KEYS[2].
local from8, to8 = ARGV[1], ARGV[2]
local entries = redis.call('ZRANGEBYLEX', KEYS[4], '(L' .. from8 .. '\255',
    '(L' .. to8 .. '\255', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {0}
for i = 1, #entries do
	local e = entries[i]
	local op = string.sub(e, -9, -9)
	local value = ''
	if op == 'P' then
		local P = string.sub(e, 10, -10)
		value = redis.call('HGET', KEYS[2], data_key(P, string.sub(e, -8)))
		if not value then
			error({err = 'PERCDAMAGED a change log entry names data '
			    .. 'the store does not hold'})
		end
	end
	out[#out + 1] = e
	out[#out + 1] = value
end
return out
