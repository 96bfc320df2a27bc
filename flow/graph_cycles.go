package flow

import (
	"fmt"
	"strings"
)

// components labels the strongly connected components of a directed graph
// (edges[i] lists the nodes i points at) with Tarjan's algorithm, iterative
// so a chain of 20 000 roles needs no deep recursion. It returns each node's
// component and whether that component holds a cycle (two or more nodes, or
// one node pointing at itself). Linear in nodes plus edges.
func components(edges [][]int) (comp []int, cyclic []bool) {
	n := len(edges)
	const unvisited = -1
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	comp = make([]int, n)
	for i := range index {
		index[i] = unvisited
	}
	var stack []int
	type frame struct{ node, next int }
	var calls []frame
	next := 0
	for root := range n {
		if index[root] != unvisited {
			continue
		}
		calls = append(calls, frame{root, 0})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.node
			if f.next < len(edges[v]) {
				w := edges[v][f.next]
				f.next++
				switch {
				case index[w] == unvisited:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].node
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			id := len(cyclic)
			size := 0
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = id
				size++
				if w == v {
					break
				}
			}
			cyclic = append(cyclic, size > 1 || selfLoop(edges, v))
		}
	}
	return comp, cyclic
}

func selfLoop(edges [][]int, v int) bool {
	for _, w := range edges[v] {
		if w == v {
			return true
		}
	}
	return false
}

// cycleThrough returns a shortest cycle from start back to start that stays
// inside start's component (breadth-first), as node indexes with start at
// both ends. start must be in a cyclic component.
func cycleThrough(edges [][]int, comp []int, start int) []int {
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range edges[v] {
			if comp[w] != comp[start] {
				continue
			}
			if w == start {
				path := []int{start}
				for u := v; u != start; u = prev[u] {
					path = append(path, u)
				}
				path = append(path, start)
				// path runs backwards: start, v, ..., start.
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// maxCycleNames bounds how many role names a cycle message spells out, so
// a cycle of thousands of roles stays a short line and costs the same to
// write for each of its roles.
const maxCycleNames = 8

// formatCycle writes the cycle (first == last) rotated to start at
// position k, as "b -> c -> a -> b", eliding the middle of a long cycle.
func formatCycle(cycle []string, k int) string {
	n := len(cycle) - 1 // distinct roles
	at := func(i int) string { return cycle[(k+i)%n] }
	var parts []string
	if n+1 <= maxCycleNames {
		for i := 0; i <= n; i++ {
			parts = append(parts, at(i))
		}
		return strings.Join(parts, " -> ")
	}
	for i := range maxCycleNames / 2 {
		parts = append(parts, at(i))
	}
	parts = append(parts, fmt.Sprintf("… %d more …", n+1-maxCycleNames/2-2))
	parts = append(parts, at(n-1), at(n))
	return strings.Join(parts, " -> ")
}
