-- lib/redis/lua/scan.lua - one page of a scan of one bucket: the cells
-- whose keys lie between ARGV[1] and ARGV[2] (ZRANGEBYLEX bounds), read
-- at snapshot ts8 as read.lua reads one, from a page of at most ARGV[3]
-- keys, in one atomic look.  ARGV[4..6]: ts8, known_start8,
-- known_visible, as read.lua's.  KEYS: the bucket's first two
-- (common.lua), its codec keys and its hash of values, and its fence
-- (RS_FENCE, redis.h), written so that the WAIT after this covers the
-- versions it read.
-- Returns {next, last, P, code, value, P, code, value, ...}: each cell
-- of the page with read.lua's code 0, 2 or 3 and what goes with it
-- (a cell with no value is left out), in key order, each after the
-- lock of the known transaction it was read past, if any, with code 4
-- (for the caller to clean with the others of its transaction); next
-- is the bound the next page starts from, last 1 when there is none.
-- A full page's last cell may go on past it, so it is left to the next
-- page; unless it is the page's only cell, which is then read whole.
local from, stop, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ts8, kstart, kvisible = ARGV[4], ARGV[5], ARGV[6]

refuse_below_safe_point(ts8)
fence(function() redis.pcall('SET', KEYS[3], '1') end)

local keys = redis.call('ZRANGEBYLEX', KEYS[1], from, stop, 'LIMIT', 0,
    limit)
local cells = {}
local i = 1
while i <= #keys do
	-- A key is its cell's prefix P, a kind and 8 bytes of timestamp.
	local P = string.sub(keys[i], 1, -10)
	local cell = { P = P, lock = false, writes = {} }
	while i <= #keys and string.len(keys[i]) == string.len(P) + 9 and
	    string.sub(keys[i], 1, -10) == P do
		local kind = string.byte(keys[i], -9)
		if kind == 1 then
			cell.lock = true
		elseif kind == 2 then
			cell.writes[#cell.writes + 1] = keys[i]
		end
		i = i + 1
	end
	cells[#cells + 1] = cell
end

local out = { '', 1 }
if #keys == limit then
	out[2] = 0
	if #cells > 1 then
		out[1] = '[' .. cells[#cells].P
		cells[#cells] = nil
	else
		out[1] = '[' .. cells[1].P .. '\7'
		cells[1].whole = true
	end
end
for _, cell in ipairs(cells) do
	local seen = cell
	if cell.whole then
		seen = nil
	end
	if cell.lock and kstart ~= '' then
		local lock = redis.call('HGET', KEYS[2], lock_key(cell.P))
		if lock and lock_start(lock) == kstart then
			out[#out + 1] = cell.P
			out[#out + 1] = 4
			out[#out + 1] = lock
		end
	end
	local r = read_cell(cell.P, ts8, kstart, kvisible, seen)
	if r[1] ~= 1 then
		out[#out + 1] = cell.P
		out[#out + 1] = r[1]
		out[#out + 1] = r[2]
	end
end
return out
