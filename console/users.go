package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

// AdminName is the user Bootstrap creates.
const AdminName = "admin"

// Bootstrap creates the admin user when the store has no user yet. Its
// password is the given one (cmd passes ROSETTA_ADMIN_PASSWORD) or, when
// that is empty, a generated one that Bootstrap returns so the caller can
// print it once. When users exist already it does nothing and returns "".
func Bootstrap(ctx context.Context, st store.Store, password string) (generated string, err error) {
	users, err := st.Users(ctx)
	if err != nil {
		return "", fmt.Errorf("cannot list users: %w", err)
	}
	if len(users) > 0 {
		return "", nil
	}
	if password == "" {
		password = randomBase62(20)
		generated = password
	} else if err := checkPasswordRule("password", password); err != nil {
		return "", fmt.Errorf("ROSETTA_ADMIN_PASSWORD: %w", err)
	}
	u := &store.User{Name: AdminName, Role: store.RoleAdmin, PasswordHash: hashPassword(password)}
	err = st.CreateUser(ctx, u)
	if errors.Is(err, store.ErrConflict) {
		return "", nil // another node bootstrapped at the same moment
	} else if err != nil {
		return "", fmt.Errorf("cannot create the admin user: %w", err)
	}
	return generated, nil
}

type userView struct {
	ID       int64      `json:"id"`
	Name     string     `json:"name"`
	Role     store.Role `json:"role"`
	Disabled bool       `json:"disabled"`
	Created  time.Time  `json:"created"`
}

func viewUser(u *store.User) userView {
	return userView{ID: u.ID, Name: u.Name, Role: u.Role, Disabled: u.Disabled, Created: u.Created}
}

// userInput is the users form; on edit, absent fields stay as they are.
type userInput struct {
	Name     *string     `json:"name"`
	Password *string     `json:"password"`
	Role     *store.Role `json:"role"`
	Disabled *bool       `json:"disabled"`
}

func (in *userInput) apply(u *store.User) error {
	if in.Name != nil {
		if err := checkIdent("name", *in.Name, userNameRule, "letters, digits and . _ @ -"); err != nil {
			return err
		}
		u.Name = *in.Name
	}
	if in.Password != nil {
		if err := checkPasswordRule("password", *in.Password); err != nil {
			return err
		}
		u.PasswordHash = hashPassword(*in.Password)
	}
	if in.Role != nil {
		if *in.Role != store.RoleAdmin && *in.Role != store.RoleUser {
			return badField("role", "role must be %q or %q", store.RoleAdmin, store.RoleUser)
		}
		u.Role = *in.Role
	}
	if in.Disabled != nil {
		u.Disabled = *in.Disabled
	}
	return nil
}

func (c *Console) listUsers(cl *call) error {
	users, err := c.st.Users(cl.ctx)
	if err != nil {
		return err
	}
	views := make([]userView, len(users))
	for i := range users {
		views[i] = viewUser(&users[i])
	}
	return cl.reply(map[string]any{"users": views})
}

func (c *Console) createUser(cl *call) error {
	var in userInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return badField("name", "name is required")
	}
	if in.Password == nil {
		return badField("password", "password is required")
	}
	u := &store.User{Role: store.RoleUser}
	if err := in.apply(u); err != nil {
		return err
	}
	if err := c.st.CreateUser(cl.ctx, u); err != nil {
		return err
	}
	return cl.reply(viewUser(u))
}

func (c *Console) updateUser(cl *call) error {
	id, err := pathID(cl.rc, "id")
	if err != nil {
		return err
	}
	var in userInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	// An admin who demoted or disabled themself could leave nobody able to
	// manage the gateway.
	if id == cl.user.ID && in.Role != nil && *in.Role != store.RoleAdmin {
		return badField("role", "you cannot take the admin role from yourself")
	}
	if id == cl.user.ID && in.Disabled != nil && *in.Disabled {
		return badField("disabled", "you cannot disable yourself")
	}
	u, err := c.st.User(cl.ctx, id)
	if err != nil {
		return err
	}
	wasDisabled := u.Disabled
	if err := in.apply(u); err != nil {
		return err
	}
	if err := c.st.UpdateUser(cl.ctx, u); err != nil {
		return err
	}
	// A new password or a disabled account ends the user's logins.
	if in.Password != nil || u.Disabled {
		if err := c.st.DeleteUserSessions(cl.ctx, u.ID); err != nil {
			return err
		}
	}
	// A disabled user's keys stop working (and an enabled one's work
	// again) from the next request on.
	if u.Disabled != wasDisabled {
		if err := c.forgetUserKeys(cl.ctx, u.ID); err != nil {
			return err
		}
	}
	return cl.reply(viewUser(u))
}

// forgetUserKeys drops the user's keys from the gateway's caches, so that a
// change to the user holds for them at once, not when the entries age out.
func (c *Console) forgetUserKeys(ctx context.Context, userID int64) error {
	keys, err := c.st.Keys(ctx, userID)
	if err != nil {
		return err
	}
	for i := range keys {
		c.gw.KeyChanged(keys[i].Hash)
	}
	return nil
}

func (c *Console) deleteUser(cl *call) error {
	id, err := pathID(cl.rc, "id")
	if err != nil {
		return err
	}
	if id == cl.user.ID {
		return badField("id", "you cannot delete yourself")
	}
	// Listed before the delete, which takes the keys with it.
	keys, err := c.st.Keys(cl.ctx, id)
	if err != nil {
		return err
	}
	if err := c.st.DeleteUser(cl.ctx, id); err != nil {
		return err
	}
	for i := range keys {
		c.gw.KeyChanged(keys[i].Hash)
	}
	return cl.reply(struct{}{})
}
