package broker

import (
	"reflect"
	"testing"
)

func TestDecodeAnswerDropsVanishedItems(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	cases := map[string]struct {
		body string
		want []item
	}{
		"plain":             {`[{"name":"a"},{"name":"b"}]`, []item{{"a"}, {"b"}}},
		"one vanished":      {`[{"name":"a"},[],{"name":"b"}]`, []item{{"a"}, {"b"}}},
		"all but one":       {`[[],[],{"name":"b"},[]]`, []item{{"b"}}},
		"nothing but holes": {`[[],[]]`, []item{}},
		"4.3's empty item":  {`[{"name":"a"},{}]`, []item{{"a"}}},
		"only one, gone":    {`[{}]`, []item{}},
	}
	for name, tc := range cases {
		var got []item
		err := decodeAnswer([]byte(tc.body), &got)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}

	// Inside a page, too, and a field that is an empty array stays.
	var page apiPage[struct {
		Name    string   `json:"name"`
		Members []string `json:"members"`
	}]
	if err := decodeAnswer([]byte(`{"items":[{"name":"q","members":[]},[]],"page_count":1}`), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Name != "q" || page.Items[0].Members == nil {
		t.Errorf("page = %+v", page)
	}

	// A wrong type that is not a vanished item is still reported, and an
	// array of other things keeps its empty members.
	var wrong []item
	if err := decodeAnswer([]byte(`[{"name":["a"]},[]]`), &wrong); err == nil {
		t.Errorf("decoded %v, want an error", wrong)
	}
	var lists [][]string
	if err := decodeAnswer([]byte(`[["a"],[]]`), &lists); err != nil || len(lists) != 2 {
		t.Errorf("decoded %v, %v; want both lists", lists, err)
	}
}
