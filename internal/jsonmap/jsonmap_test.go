package jsonmap

import "testing"

func TestOf(t *testing.T) {
	m, err := Of(struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
	}{A: 3})
	if err != nil || m["a"] != float64(3) || len(m) != 1 {
		t.Fatalf("Of(struct) = %v, %v", m, err)
	}
	if m, err := Of(nil); err != nil || m == nil || len(m) != 0 {
		t.Fatalf("Of(nil) = %v, %v", m, err)
	}
	if _, err := Of([]int{1}); err == nil {
		t.Fatal("a list is not an object")
	}
	if _, err := Decode([]byte("null")); err == nil {
		t.Fatal("null is not an object")
	}
}
