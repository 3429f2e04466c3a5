package session

import "testing"

// A workspace URI from VS Code on Windows (file:///c%3A/Users/me/proj, the
// path decoded to "/c:/Users/me/proj") names the folder c:\Users\me\proj.
func TestFileURIPath(t *testing.T) {
	for _, c := range []struct {
		path    string
		windows bool
		want    string
	}{
		{"/home/me/proj", false, "/home/me/proj"},
		{"/c:/Users/me/proj", false, "/c:/Users/me/proj"},
		{"/c:/Users/me/proj", true, `c:\Users\me\proj`},
		{"/C:/", true, `C:\`},
		{"/D:", true, `D:`},
		{"/Users/me", true, `\Users\me`},
		{"/1:/x", true, `\1:\x`},
	} {
		if got := fileURIPath(c.path, c.windows); got != c.want {
			t.Errorf("fileURIPath(%q, windows %v) = %q, want %q", c.path, c.windows, got, c.want)
		}
	}
}
