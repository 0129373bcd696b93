package glogr

import (
	"errors"
	"testing"
)

func TestFormat(t *testing.T) {
	base := &sink{}
	named := base.WithName("controller").WithName("sparkapp").WithValues("namespace", "ns1").(*sink)
	tests := []struct {
		name string
		s    *sink
		msg  string
		kv   []any
		err  error
		want string
	}{
		{name: "plain", s: base, msg: "started", want: "started"},
		{name: "pairs quoted", s: base, msg: "submitted", kv: []any{"app", "a b", "attempt", 2}, want: `submitted app="a b" attempt=2`},
		{name: "odd pairs", s: base, msg: "m", kv: []any{"dangling"}, want: "m dangling=<missing>"},
		{name: "name and values", s: named, msg: "m", kv: []any{"k", "v"}, want: `controller/sparkapp] m namespace="ns1" k="v"`},
		{name: "error", s: base, msg: "failed", err: errors.New("boom"), want: `failed err="boom"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.format(tt.msg, tt.kv, tt.err); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWithValuesDoesNotShareBackingArray(t *testing.T) {
	parent := (&sink{}).WithValues("a", 1).(*sink)
	x := parent.WithValues("x", 1).(*sink)
	y := parent.WithValues("y", 2).(*sink)
	if got := x.format("m", nil, nil); got != "m a=1 x=1" {
		t.Errorf("x = %q", got)
	}
	if got := y.format("m", nil, nil); got != "m a=1 y=2" {
		t.Errorf("y = %q", got)
	}
}
