package store

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm/schema"

	"holdco/models"
)

// AuthorizeConglomerateCredits scans the conglomerate's row with
// database/sql: its column list is every column of the model, each
// bound to the model's own field.
func TestConglomerateColumnsAreTheModels(t *testing.T) {
	var c models.Conglomerate
	assertColumnsAreTheModels(t, &c, conglomerateColumns, conglomerateDest(&c))
}

// getCompany scans the company's row with database/sql: its column list
// is every column of the model, each bound to the model's own field.
func TestCompanyColumnsAreTheModels(t *testing.T) {
	var c models.Company
	assertColumnsAreTheModels(t, &c, companyColumns, companyDest(&c))
}

// assertColumnsAreTheModels checks that columns are every column of the
// model model points at, and that dest (a scan's destinations in the
// columns' order) are that model's own fields (through emptyIfNull too).
func assertColumnsAreTheModels(t *testing.T, model any, columns []string, dest []any) {
	t.Helper()
	sch, err := schema.Parse(model, &sync.Map{}, schema.NamingStrategy{})
	require.NoError(t, err)
	var modelColumns []string
	for _, f := range sch.Fields {
		if f.DBName != "" {
			modelColumns = append(modelColumns, f.DBName)
		}
	}
	assert.ElementsMatch(t, modelColumns, columns)

	require.Len(t, dest, len(columns))
	for i, name := range columns {
		f := sch.LookUpField(name)
		require.NotNil(t, f, name)
		field := f.ReflectValueOf(context.Background(), reflect.ValueOf(model).Elem()).Addr().Interface()
		d := dest[i]
		if e, ok := d.(emptyIfNull); ok {
			d = e.s
		}
		assert.Same(t, field, d, "destination %d is the field of %s", i, name)
	}
}
