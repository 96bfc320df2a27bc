// Package status answers "how far has each VM of a onekube service got?": it
// decodes OneFlow's service document, turns oned's view of each VM (its
// states and the keys onekube-agent publishes into USER_TEMPLATE) into rows,
// summarizes them into one outcome, and renders a table or a JSON document.
//
// Decoding, summarizing and rendering are pure; fetch.go reads OneFlow and
// oned through two narrow interfaces that flow/register implements.
//
// The published join token never enters this package's types: a VM carries
// only whether one was published.
package status
