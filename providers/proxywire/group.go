package proxywire

import "encoding/json"

// An Item is one element of a rebuilt conversation array (an Anthropic
// message, a Gemini content): the element of the agent's request it stands
// for (Src, -1 for a new one), its role, its parts (blocks) in order, the
// request messages it carries and whether every one of them is unchanged.
type Item struct {
	Src   int
	Role  string
	Parts []json.RawMessage
	Hist  []int
	Same  bool
}

// Whole reports whether it carries, unchanged and in order, exactly the n
// request messages of its element that start at first: its bytes can go
// out as they came.
func (it *Item) Whole(first, n int) bool {
	whole := it.Same && len(it.Hist) == n
	for k, h := range it.Hist {
		whole = whole && h == first+k
	}
	return whole
}

// GroupProjection groups the messages of a projection into the items of
// the array that carries it, in order. slots are the projection's
// ([MatchProjection]). A new message (no source) gets its parts from
// fresh, and joins the new item before it when that has its role; a
// message of the request gets its parts and the index and role of its
// element from kept, and joins the item before it when that stands for the
// same element. A new message without parts is dropped.
func GroupProjection(slots []Slot, fresh func(i int) (role string, parts []json.RawMessage), kept func(i int) (item int, role string, parts []json.RawMessage)) []*Item {
	var items []*Item
	for i, sl := range slots {
		if sl.Src < 0 {
			role, parts := fresh(i)
			if len(parts) == 0 {
				continue
			}
			if n := len(items); n > 0 && items[n-1].Src < 0 && items[n-1].Role == role {
				items[n-1].Parts = append(items[n-1].Parts, parts...)
				continue
			}
			items = append(items, &Item{Src: -1, Role: role, Parts: parts})
			continue
		}
		src, role, parts := kept(i)
		var cur *Item
		if n := len(items); n > 0 && items[n-1].Src == src {
			cur = items[n-1]
		} else {
			cur = &Item{Src: src, Role: role, Same: true}
			items = append(items, cur)
		}
		cur.Parts = append(cur.Parts, parts...)
		cur.Hist = append(cur.Hist, sl.Src)
		cur.Same = cur.Same && sl.Same
	}
	return items
}
